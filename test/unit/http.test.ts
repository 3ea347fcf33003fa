// The HTTP pool under the Kubernetes and admin API clients, against real servers on loopback:
// each timeout phase, aborts, keep-alive reuse and a closed pool. (Headers and body timeouts as a
// user meets them are in test/unit/api/client.test.ts and test/unit/runtime/kube-client.test.ts.)
import { createServer, type Server } from 'node:http';
import {
  type AddressInfo,
  createServer as createTcpServer,
  type Socket,
  type Server as TcpServer,
} from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent, HttpTimeoutError, readText } from '../../src/http.ts';

const servers: (Server | TcpServer)[] = [];
const sockets = new Set<Socket>();
let agent: HttpAgent | undefined;

afterEach(async () => {
  agent?.close();
  agent = undefined;
  for (const s of sockets) s.destroy();
  sockets.clear();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function pool(timeouts: Partial<ConstructorParameters<typeof HttpAgent>[0]> = {}): HttpAgent {
  agent = new HttpAgent({
    connectTimeoutMs: 5_000,
    headersTimeoutMs: 5_000,
    bodyTimeoutMs: 5_000,
    ...timeouts,
  });
  return agent;
}

async function listen<S extends Server | TcpServer>(server: S): Promise<string> {
  servers.push(server);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('HttpAgent', () => {
  it('times out a TLS handshake the server never answers as a connect timeout', async () => {
    // TCP connects, then silence: the handshake, not the response, is what stalls.
    const host = await listen(createTcpServer(() => {}));
    const started = Date.now();
    const err = await pool({ connectTimeoutMs: 200 })
      .request(`https://${host}/`, { method: 'GET', headers: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpTimeoutError);
    expect(err).toMatchObject({ phase: 'connect', code: 'HTTP_CONNECT_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('fails a streaming body with the reason of an aborted signal', async () => {
    const host = await listen(
      createServer((_req, res) => {
        res.writeHead(200);
        res.write('first chunk');
      }),
    );
    const controller = new AbortController();
    const res = await pool().request(`http://${host}/`, {
      method: 'GET',
      headers: {},
      signal: controller.signal,
    });
    const reading = readText(res.body).catch((e: unknown) => e);
    const reason = new Error('stopped by the caller');
    controller.abort(reason);
    expect(await reading).toBe(reason);
  });

  it('reuses one connection for consecutive requests', async () => {
    const peers = new Set<number>();
    const host = await listen(
      createServer((req, res) => {
        peers.add(req.socket.remotePort ?? 0);
        res.end(`${req.method} ${req.headers['content-length'] ?? '-'}`);
      }),
    );
    const http = pool();
    for (const body of ['é', 'x'.repeat(10)]) {
      const res = await http.request(`http://${host}/`, { method: 'POST', headers: {}, body });
      expect(await readText(res.body)).toBe(`POST ${Buffer.byteLength(body)}`);
    }
    expect(peers.size).toBe(1);
  });

  it('refuses requests once closed, without connecting', async () => {
    let connections = 0;
    const host = await listen(createServer((_req, res) => res.end('ok')));
    servers[0]?.on('connection', () => {
      connections += 1;
    });
    const http = pool();
    http.close();
    await expect(http.request(`http://${host}/`, { method: 'GET', headers: {} })).rejects.toMatchObject({
      code: 'HTTP_CLOSED',
    });
    expect(connections).toBe(0);
  });

  it('stops reading a body over the size limit with the caller’s error', async () => {
    const host = await listen(createServer((_req, res) => res.end('y'.repeat(4096))));
    const res = await pool().request(`http://${host}/`, { method: 'GET', headers: {} });
    await expect(readText(res.body, 1024, () => new Error('too big'))).rejects.toThrow('too big');
  });
});
