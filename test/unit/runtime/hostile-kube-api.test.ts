// The Kubernetes client against a hostile API server on loopback, as the CLI and the operator's
// informers use it: a list whose `continue` never ends and answers that never end are refused in
// bounded requests and bytes, with an error naming the server.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { Informer, type KubeObject } from '../../../src/runtime/informer.ts';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  KubeClient,
  KubeResponseError,
  MAX_LIST_PAGES,
} from '../../../src/runtime/kube-client.ts';
import { captureLogs } from '../../support/cluster/operator.ts';
import {
  endlessBody,
  endlessList,
  type FakeKubeApi,
  type FakeRoutes,
  startFakeKubeApi,
} from '../../support/servers/fake-kube-api.ts';

const PATH = '/api/v1/namespaces/docs/configmaps';
const MiB = 2 ** 20;
// What the kernel and Node buffer between the server's writes and the client's reads on loopback.
const SOCKET_SLACK = 16 * MiB;

let api: FakeKubeApi | undefined;
let kube: KubeClient | undefined;
afterEach(async () => {
  await kube?.close();
  await api?.close();
  kube = undefined;
  api = undefined;
});

async function hostile(routes: FakeRoutes, maxResponseBytes?: number): Promise<KubeClient> {
  api = await startFakeKubeApi(routes);
  kube = await KubeClient.create(api.kubeconfig, maxResponseBytes ? { maxResponseBytes } : {});
  return kube;
}

const calls = () => api?.requests.filter((p) => p === PATH).length;

describe('KubeClient against a hostile API server', () => {
  it('refuses a list whose continue never ends after MAX_LIST_PAGES pages', async () => {
    const client = await hostile({ [PATH]: endlessList() });
    const error = await client.list(PATH).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeResponseError);
    expect((error as Error).message).toBe(
      `the Kubernetes API at ${api?.server} kept the list GET ${PATH} going past ${MAX_LIST_PAGES} pages: refused`,
    );
    expect(calls()).toBe(MAX_LIST_PAGES);
  });

  it('refuses a list that sends an earlier continue token again, at once', async () => {
    let page = 0;
    const client = await hostile({
      [PATH]: () => ({
        body: { metadata: { resourceVersion: '1', continue: `p${++page % 3}` }, items: [] },
      }),
    });
    await expect(client.list(PATH)).rejects.toThrow(
      `the Kubernetes API at ${api?.server} sent an earlier page's continue token again on page 4 of the list GET ${PATH}: the list would never end: refused`,
    );
    expect(calls()).toBe(4);
  });

  it('stops reading an answer at the size limit', async () => {
    const sent = { bytes: 0 };
    const client = await hostile({ [PATH]: endlessBody(sent, 3 * DEFAULT_MAX_RESPONSE_BYTES) });
    await expect(client.get(PATH)).rejects.toThrow(
      `the Kubernetes API at ${api?.server} answered GET ${PATH} with more than 64 MiB: refused`,
    );
    expect(sent.bytes).toBeGreaterThan(DEFAULT_MAX_RESPONSE_BYTES);
    expect(sent.bytes).toBeLessThan(DEFAULT_MAX_RESPONSE_BYTES + SOCKET_SLACK);
  });

  it("refuses a list whose pages together pass four answers' worth", async () => {
    let page = 0;
    // About 0.9 MiB a page, each below the 1 MiB limit of one answer.
    const items = Array.from({ length: 9000 }, (_, i) => ({ metadata: { name: `cm-${i}`.padEnd(80, '-') } }));
    const client = await hostile(
      { [PATH]: () => ({ body: { metadata: { resourceVersion: '1', continue: `p${++page}` }, items } }) },
      MiB,
    );
    await expect(client.list(PATH)).rejects.toThrow(
      `the Kubernetes API at ${api?.server} answered the list GET ${PATH} with more than 4 MiB in 5 pages: refused`,
    );
    expect(calls()).toBe(5);
  });

  it('takes a page with more items than a call takes arguments', async () => {
    const client = await hostile({
      [PATH]: { body: { metadata: { resourceVersion: '7' }, items: Array(300_000).fill(0) } },
    });
    expect((await client.list(PATH)).items).toHaveLength(300_000);
  });

  it('stops reading a watch event that never ends at the size limit', async () => {
    const sent = { bytes: 0 };
    const client = await hostile({ [PATH]: endlessBody(sent, 64 * MiB) }, MiB);
    const events = client.watch(PATH, {}, AbortSignal.timeout(20_000));
    await expect(events.next()).rejects.toThrow(
      `the Kubernetes API at ${api?.server} answered WATCH ${PATH} with more than 1 MiB in one event: refused`,
    );
    expect(sent.bytes).toBeLessThan(MiB + SOCKET_SLACK);
  });

  it("stops reading a watch's error answer at the size limit", async () => {
    const sent = { bytes: 0 };
    const client = await hostile({ [PATH]: endlessBody(sent, 64 * MiB, 500) }, MiB);
    await expect(client.watch(PATH, {}, AbortSignal.timeout(20_000)).next()).rejects.toThrow(
      `the Kubernetes API at ${api?.server} answered WATCH ${PATH} with more than 1 MiB: refused`,
    );
    expect(sent.bytes).toBeLessThan(MiB + SOCKET_SLACK);
  });
});

describe("an informer's list against a hostile API server", () => {
  async function firstListFailure(
    routes: FakeRoutes,
  ): Promise<{ informer: Informer<KubeObject>; err: string }> {
    const client = await hostile(routes);
    const { lines, stream } = captureLogs();
    const informer = new Informer<KubeObject>({
      client,
      apiVersion: 'v1',
      plural: 'configmaps',
      namespaces: ['docs'],
      // One attempt in this test: the retry waits a minute.
      backoffBaseMs: 60_000,
      logger: createLogger({ destination: stream }),
    });
    informer.start();
    for (let i = 0; i < 600 && !lines.some((l) => l.includes('list/watch failed')); i++)
      await new Promise((r) => setTimeout(r, 50));
    await informer.stop();
    const failed = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'list/watch failed; retrying');
    return { informer, err: failed?.err?.message };
  }

  it('fails the list of a continue that never ends, in MAX_LIST_PAGES requests', async () => {
    const { informer, err } = await firstListFailure({ [PATH]: endlessList() });
    expect(err).toBe(
      `the Kubernetes API at ${api?.server} kept the list GET ${PATH} going past ${MAX_LIST_PAGES} pages: refused`,
    );
    expect(calls()).toBe(MAX_LIST_PAGES);
    expect(informer.hasSynced()).toBe(false);
  });

  it('fails the list of an answer that never ends at the size limit', async () => {
    const sent = { bytes: 0 };
    const { informer, err } = await firstListFailure({
      [PATH]: endlessBody(sent, 3 * DEFAULT_MAX_RESPONSE_BYTES),
    });
    expect(err).toBe(
      `the Kubernetes API at ${api?.server} answered GET ${PATH} with more than 64 MiB: refused`,
    );
    expect(sent.bytes).toBeLessThan(DEFAULT_MAX_RESPONSE_BYTES + SOCKET_SLACK);
    expect(informer.hasSynced()).toBe(false);
  });
});
