// The Kubernetes REST client against a real HTTP server on loopback: timeouts and stream decoding.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/kube-client.ts';
import { tempDir } from '../../support/temp.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: Server | undefined;
let kube: KubeClient | undefined;

afterEach(async () => {
  await kube?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  kube = undefined;
  server = undefined;
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  bodyTimeoutMs: number,
): Promise<KubeClient> {
  server = createServer((req, res) => void handler(req, res).catch(() => res.destroy()));
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const file = join(tempDir('kube-client-'), 'kubeconfig');
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
  kube = await KubeClient.create(file, { bodyTimeoutMs });
  return kube;
}

const line = (o: unknown) => Buffer.from(`${JSON.stringify(o)}\n`);

describe('KubeClient', () => {
  it('fails a request whose body stalls past the body timeout', async () => {
    const client = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
      await pause(5_000);
      res.end(']}');
    }, 200);
    await expect(client.get('/api/v1/namespaces')).rejects.toMatchObject({ code: 'HTTP_BODY_TIMEOUT' });
  });

  it('lists an empty metadata-only list, which the API server sends with items: null', async () => {
    const client = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"42"},"items":null}');
    }, 1_000);
    const list = await client.metadataOnly().list('/apis/apps/v1/statefulsets', {});
    expect(list).toEqual({ metadata: { resourceVersion: '42' }, items: [] });
  });

  it('keeps a watch open through pauses longer than the body timeout', async () => {
    const client = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(line({ type: 'ADDED', object: { metadata: { name: 'a' } } }));
      await pause(600);
      res.end(line({ type: 'ADDED', object: { metadata: { name: 'b' } } }));
    }, 200);
    const names: string[] = [];
    for await (const e of client.watch<{ metadata: { name: string } }>(
      '/api/v1/configmaps',
      {},
      AbortSignal.timeout(10_000),
    ))
      names.push(e.object.metadata.name);
    expect(names).toEqual(['a', 'b']);
  });

  it('decodes a multi-byte character split across watch chunks', async () => {
    const event = line({
      type: 'ADDED',
      object: { metadata: { name: 'a', annotations: { t: 'Grüße 日本' } } },
    });
    // Cut inside the three bytes of 日.
    const cut = event.indexOf(Buffer.from('日')) + 1;
    const client = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(event.subarray(0, cut));
      await pause(100);
      res.end(event.subarray(cut));
    }, 5_000);
    const seen: string[] = [];
    for await (const e of client.watch<{ metadata: { annotations: { t: string } } }>(
      '/api/v1/configmaps',
      {},
      AbortSignal.timeout(10_000),
    ))
      seen.push(e.object.metadata.annotations.t);
    expect(seen).toEqual(['Grüße 日本']);
  });
});
