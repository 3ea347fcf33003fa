// A Kubernetes API server on loopback that answers from a table of paths, and a kubeconfig for
// it: the CLI's cluster commands (status, check, trigger --wait) run against it as a subprocess.
// Paths under /hooks/ (the operator's trigger receiver) answer without the bearer token. A route
// may also answer as a hostile server would (a list that never ends, a body that never ends).
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '../temp.ts';

export const FAKE_KUBE_TOKEN = 'kube-token-0123456789abcdef0123456789';

export interface FakeAnswer {
  status?: number;
  body: unknown;
}
/** An answer written by hand, e.g. streamed. */
export interface RawAnswer {
  raw: (res: ServerResponse) => Promise<void>;
}
/** An answer per request path (without the query); a function is asked again on each call. */
export type FakeRoutes = Record<string, FakeAnswer | (() => FakeAnswer) | RawAnswer>;

export interface FakeKubeApi {
  server: string;
  kubeconfig: string;
  /** Paths requested, in order. */
  requests: string[];
  routes: FakeRoutes;
  close(): Promise<void>;
}

export const notFound = (message = 'the server could not find the requested resource'): FakeAnswer => ({
  status: 404,
  body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', message, code: 404 },
});

export const list = (items: unknown[]): FakeAnswer => ({
  body: { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items },
});

/** A list each page of which names a next page: its `continue` never ends. */
export function endlessList(): () => FakeAnswer {
  let page = 0;
  return () => ({
    body: {
      kind: 'List',
      apiVersion: 'v1',
      metadata: { resourceVersion: '1', continue: `p${++page}` },
      items: [],
    },
  });
}

/**
 * A list whose items keep coming until the client hangs up, or `upTo` bytes (then it ends, valid);
 * with another `status`, an error answer that long.
 * `sent.bytes` counts what was written: how much the client read, give or take socket buffers.
 */
export function endlessBody(sent: { bytes: number }, upTo: number, status = 200): RawAnswer {
  const items = Buffer.from('{"metadata":{"name":"x"}},'.repeat(2500));
  return {
    raw: async (res) => {
      // A hang-up ends the writing (a drain still awaited rejects, and the route gives up).
      const hangUp = new AbortController();
      res.once('close', () => hangUp.abort());
      const write = (chunk: Buffer | string) => {
        sent.bytes += Buffer.byteLength(chunk);
        return res.write(chunk);
      };
      res.writeHead(status, { 'content-type': 'application/json' });
      write('{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[');
      while (!hangUp.signal.aborted && sent.bytes < upTo) {
        if (!write(items)) await once(res, 'drain', { signal: hangUp.signal });
      }
      res.end('{"metadata":{"name":"end"}}]}');
    },
  };
}

export async function startFakeKubeApi(routes: FakeRoutes = {}): Promise<FakeKubeApi> {
  const requests: string[] = [];
  const api: FakeKubeApi = { server: '', kubeconfig: '', requests, routes, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    const route = api.routes[path];
    const answer =
      !path.startsWith('/hooks/') && req.headers.authorization !== `Bearer ${FAKE_KUBE_TOKEN}`
        ? {
            status: 401,
            body: { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized', code: 401 },
          }
        : route === undefined
          ? notFound()
          : typeof route === 'function'
            ? route()
            : route;
    if ('raw' in answer) {
      answer.raw(res).catch(() => res.destroy());
      return;
    }
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  api.server = `http://127.0.0.1:${port}`;
  api.kubeconfig = fakeKubeconfig(api.server);
  api.close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return api;
}

/** A kubeconfig naming `server` with a bearer token (another token than the fake's: `token`). */
export function fakeKubeconfig(server: string, token = FAKE_KUBE_TOKEN): string {
  const file = join(tempDir('kubeconfig-'), 'config');
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: {token: ${token}}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: docs}}]
current-context: x
`,
  );
  return file;
}
