// Aborting registry calls against a loopback HTTP server that plays the registry: a signal stops a
// call wherever it is (waiting for an answer, for a retry, for a token, or streaming a blob), with
// the signal's own reason, nothing retried after it, and the connection closed on the server.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OciError } from '../../../src/oci/errors.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { RegistryTransport } from '../../../src/oci/transport.ts';

interface FakeRegistry {
  host: string;
  /** Requests received, as `METHOD path`. */
  requests: string[];
  /** Resolves when the first request arrives. */
  received: Promise<void>;
  /** Resolves when the server sees the connection of the request in flight close. */
  closed: Promise<void>;
}

const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

/** A registry on loopback whose every request `handle` answers (or never answers). */
async function fakeRegistry(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<FakeRegistry> {
  let sawClose!: () => void;
  let sawRequest!: () => void;
  const fake: FakeRegistry = {
    host: '',
    requests: [],
    received: new Promise((resolve) => {
      sawRequest = resolve;
    }),
    closed: new Promise((resolve) => {
      sawClose = resolve;
    }),
  };
  const server = createServer((req, res) => {
    fake.requests.push(`${req.method} ${req.url}`);
    sawRequest();
    res.on('close', () => sawClose());
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return fake;
}

/** A signal aborted `ms` after `after` (a request arriving). */
const abortedAfter = (after: Promise<void>, ms: number) => {
  const controller = new AbortController();
  const reason = new Error('release deleted');
  void after.then(() => setTimeout(() => controller.abort(reason), ms));
  return { signal: controller.signal, reason };
};

const manifestCall = (signal: AbortSignal) => ({
  method: 'GET' as const,
  path: '/v2/docs/site/manifests/latest',
  scope: ['repository:docs/site:pull'],
  expect: [200],
  what: 'get manifest docs/site:latest',
  signal,
});

describe('aborting a registry call', () => {
  it('while it waits for an answer: rejects with the reason at once, closes the connection, never retries', async () => {
    const fake = await fakeRegistry(() => {
      // no answer
    });
    const transport = new RegistryTransport({ registry: fake.host, retries: 3 });
    const { signal, reason } = abortedAfter(fake.received, 50);
    await expect(transport.call(manifestCall(signal))).rejects.toBe(reason);
    await fake.closed;
    expect(fake.requests).toEqual(['GET /v2/docs/site/manifests/latest']);
    transport.close();
  });

  it('while it waits to retry a busy registry: rejects with the reason, no request after it', async () => {
    const fake = await fakeRegistry((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"errors":[{"code":"UNAVAILABLE"}]}');
    });
    // Retries of a 503 wait 500 ms, 1 s, 2 s: the abort comes during the first wait.
    const transport = new RegistryTransport({ registry: fake.host, retries: 3 });
    const { signal, reason } = abortedAfter(fake.received, 150);
    const started = performance.now();
    await expect(transport.call(manifestCall(signal))).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(700);
    await new Promise((r) => setTimeout(r, 600));
    expect(fake.requests).toHaveLength(1);
    transport.close();
  });

  it('already aborted: sends nothing', async () => {
    const fake = await fakeRegistry((_req, res) => res.writeHead(200).end('{}'));
    const transport = new RegistryTransport({ registry: fake.host });
    const controller = new AbortController();
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(transport.call(manifestCall(controller.signal))).rejects.toBe(reason);
    expect(fake.requests).toEqual([]);
    transport.close();
  });

  it('while it waits for a Bearer token: rejects with the reason, not as an unreachable token service', async () => {
    const tokens = await fakeRegistry(() => {
      // the token service never answers
    });
    const fake = await fakeRegistry((_req, res) => {
      res
        .writeHead(401, {
          'www-authenticate': `Bearer realm="http://${tokens.host}/token",service="registry"`,
        })
        .end();
    });
    const transport = new RegistryTransport({ registry: fake.host, retries: 0 });
    const { signal, reason } = abortedAfter(tokens.received, 50);
    const failure = await transport.call(manifestCall(signal)).catch((e: unknown) => e);
    expect(failure).toBe(reason);
    expect(failure).not.toBeInstanceOf(OciError);
    await tokens.closed;
    expect(tokens.requests).toEqual(['GET /token?service=registry&scope=repository%3Adocs%2Fsite%3Apull']);
    transport.close();
  });

  it("while a blob streams: the stream fails with the reason (not as a short blob) and the server's sending stops", async () => {
    const blob = Buffer.alloc(8 * 1024 * 1024, 7);
    const digest = `sha256:${createHash('sha256').update(blob).digest('hex')}`;
    let sent = 0;
    const fake = await fakeRegistry((_req, res) => {
      res.writeHead(200, { 'content-length': String(blob.length), 'docker-content-digest': digest });
      // 16 KiB every 10 ms: about 10 s for the whole blob.
      const timer = setInterval(() => {
        const piece = blob.subarray(sent, sent + 16 * 1024);
        sent += piece.length;
        res.write(piece);
      }, 10);
      res.on('close', () => clearInterval(timer));
    });
    const client = new RegistryClient({ registry: fake.host, retries: 0 });
    const controller = new AbortController();
    const reason = new Error('release deleted');
    const stream = await client.getBlob('docs/site', digest, blob.length, controller.signal);
    let received = 0;
    const failure = await (async () => {
      for await (const chunk of stream) {
        received += (chunk as Buffer).length;
        if (received >= 64 * 1024) controller.abort(reason);
      }
    })().catch((e: unknown) => e);
    expect(failure).toBe(reason);
    await fake.closed;
    const atClose = sent;
    await new Promise((r) => setTimeout(r, 200));
    expect(sent).toBe(atClose);
    expect(sent).toBeLessThan(blob.length / 4);
    await client.close();
  });
});
