// Loopback HTTP servers for bundle tests: fixed bytes, or a server that drips one byte at a time.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Served {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Served> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/bundle.tar.gz`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serves `body` to every GET. */
export function serveBytes(body: Buffer): Promise<Served> {
  return listen(
    createServer((_req, res) => {
      res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/gzip' });
      res.end(body);
    }),
  );
}

/** Sends `body` one byte every `everyMs`: the idle timeout never fires. */
export function serveDrip(body: Buffer, everyMs: number): Promise<Served> {
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/gzip' });
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < body.length) res.write(body.subarray(sent, ++sent));
    }, everyMs);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  return listen(server).then((served) => ({
    ...served,
    close: () => {
      for (const timer of timers) clearInterval(timer);
      return served.close();
    },
  }));
}

/** A loopback URL nothing listens on (connection refused). */
export async function refusedUrl(): Promise<string> {
  const served = await listen(createServer());
  await served.close();
  return served.url;
}
