// A hostile registry for tests: a proxy in front of a real registry that passes every request
// through and, when told to, alters what one kind of answer carries, as a compromised mirror, a
// broken cache or a man in the middle would: a blob's bytes swapped (same length), a blob cut
// short under its full Content-Length, or a manifest asked for by digest answered with another;
// or trickles blobs as a slow link would, counting what it sent.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Tamper =
  /** Blob bodies: one byte in the middle changed, length and headers kept. */
  | { blobs: 'swap-byte' }
  /** Blob bodies: half the bytes sent under the full Content-Length, then the connection closed. */
  | { blobs: 'cut-short' }
  /** Blob bodies: unchanged, sent at this pace until the client hangs up. */
  | { blobs: 'trickle'; bytesPerSecond: number }
  /** Manifests requested by digest: these bytes (a valid manifest of another image) instead. */
  | { manifestByDigest: { bytes: Buffer; mediaType: string } };

export interface TamperingRegistry {
  /** host:port of the proxy, as in REGISTRY/REPOSITORY@DIGEST. */
  host: string;
  /** What to alter from now on (undefined: pass everything through). */
  tamper: Tamper | undefined;
  /** Answers altered so far. */
  tampered: number;
  /** Bytes of blob bodies sent so far while trickling. */
  trickled: number;
  close(): Promise<void>;
}

const BLOB = /^\/v2\/.+\/blobs\/sha256:[0-9a-f]{64}$/;
const MANIFEST_BY_DIGEST = /^\/v2\/.+\/manifests\/sha256:[0-9a-f]{64}$/;

export async function startTamperingRegistry(upstream: string): Promise<TamperingRegistry> {
  const proxy: TamperingRegistry = {
    host: '',
    tamper: undefined,
    tampered: 0,
    trickled: 0,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const tamper = req.method === 'GET' ? proxy.tamper : undefined;
    if (tamper && 'manifestByDigest' in tamper && MANIFEST_BY_DIGEST.test(path)) {
      proxy.tampered++;
      req.resume();
      res.writeHead(200, {
        'content-type': tamper.manifestByDigest.mediaType,
        'content-length': String(tamper.manifestByDigest.bytes.length),
      });
      res.end(tamper.manifestByDigest.bytes);
      return;
    }
    const [hostname, port] = upstream.split(':');
    const out = request(
      { hostname, port: Number(port), method: req.method, path: req.url, headers: req.headers },
      (up) => {
        const alter =
          tamper && 'blobs' in tamper && up.statusCode === 200 && BLOB.test(path) ? tamper : undefined;
        if (!alter) {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const body = Buffer.concat(chunks);
          proxy.tampered++;
          res.writeHead(200, { ...up.headers, 'content-length': String(body.length) });
          if (alter.blobs === 'trickle') {
            // Twenty slices a second, until all is sent or the client hangs up.
            const slice = Math.max(1, Math.round(alter.bytesPerSecond / 20));
            let at = 0;
            const timer = setInterval(() => {
              const piece = body.subarray(at, at + slice);
              at += piece.length;
              proxy.trickled += piece.length;
              if (at < body.length) return void res.write(piece);
              clearInterval(timer);
              res.end(piece);
            }, 50);
            res.on('close', () => clearInterval(timer));
          } else if (alter.blobs === 'swap-byte') {
            const at = body.length >> 1;
            body[at] = (body[at] ?? 0) ^ 0xff;
            res.end(body);
          } else {
            res.write(body.subarray(0, body.length >> 1), () => res.destroy());
          }
        });
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
