// The informer against the real API server: paginated list, watch events, recovery after the
// API server restarts mid-watch, and the watchdog on a silent stream.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ControlPlane } from '../../../scripts/control-plane/control-plane.ts';
import { Informer, type InformerOptions, type KubeObject } from '../../../src/runtime/informer.ts';
import { KubeClient, resourcePath } from '../../../src/runtime/kube-client.ts';
import { createNamespace, eventually, kubectlOk } from '../../support/cluster/kube.ts';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const LABEL = 'runtime-test=informer';
const cmPath = (ns: string, name?: string) => resourcePath('v1', 'configmaps', ns, name);
const configMap = (ns: string, name: string, value: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, labels: { 'runtime-test': 'informer' } },
  data: { value },
});

let client: KubeClient;
let ns: string;
const informers: Informer<ConfigMap>[] = [];

function start(options: Partial<InformerOptions> = {}): Informer<ConfigMap> {
  const informer = new Informer<ConfigMap>({
    client,
    apiVersion: 'v1',
    plural: 'configmaps',
    namespaces: [ns],
    labelSelector: LABEL,
    resyncMs: 0,
    ...options,
  });
  informers.push(informer);
  informer.start();
  return informer;
}

/** The informer's cache as name -> data.value, to compare with the server. */
const cacheView = (i: Informer<ConfigMap>) =>
  Object.fromEntries(i.list().map((o) => [o.metadata.name, o.data?.value]));

async function serverView(): Promise<Record<string, string | undefined>> {
  const list = await client.list<ConfigMap>(cmPath(ns), { labelSelector: LABEL });
  return Object.fromEntries(list.items.map((o) => [o.metadata.name, o.data?.value]));
}

beforeAll(async () => {
  client = await KubeClient.create(inject('kubeconfig'));
});
afterAll(async () => {
  await client.close();
});

/** A fresh namespace per test with `count` labelled ConfigMaps cm-0.. holding 'v0'. */
async function seed(count: number): Promise<void> {
  ns = await createNamespace('informer');
  await Promise.all(
    Array.from({ length: count }, (_, i) => client.create(cmPath(ns), configMap(ns, `cm-${i}`, 'v0'))),
  );
}

describe('Informer on the real API server', () => {
  afterEach(async () => {
    for (const i of informers.splice(0)) await i.stop();
    vi.restoreAllMocks();
    await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  });

  it('lists a paginated set and then follows adds, updates and deletes', async () => {
    await seed(23);
    const requests = vi.spyOn(client, 'request');
    const informer = start({ pageSize: 5 });
    const changes: string[] = [];
    informer.onChange((type, obj, old) =>
      changes.push(`${type} ${obj.metadata.name} ${old?.data?.value ?? ''}->${obj.data?.value ?? ''}`),
    );
    await informer.waitForSync();
    expect(informer.list()).toHaveLength(23);
    const pages = requests.mock.calls.filter(([method, path]) => method === 'GET' && path === cmPath(ns));
    expect(pages).toHaveLength(5); // 23 objects, 5 per page
    expect(pages.slice(1).every(([, , opts]) => Boolean(opts?.query?.continue))).toBe(true);

    await client.create(cmPath(ns), configMap(ns, 'added', 'a'));
    await client.mergePatch(cmPath(ns, 'cm-1'), { data: { value: 'v1' } });
    await client.delete(cmPath(ns, 'cm-2'));
    await eventually('watch events applied', async () => {
      const view = cacheView(informer);
      return view.added === 'a' && view['cm-1'] === 'v1' && !('cm-2' in view);
    });
    expect(changes).toContain('ADDED added ->a');
    expect(changes).toContain('MODIFIED cm-1 v0->v1');
    expect(changes).toContain('DELETED cm-2 ->v0');
    expect(cacheView(informer)).toEqual(await serverView());
    expect(informer.stats()).toMatchObject({ relists: 0, watchdogFires: 0 });
  });

  it.skipIf(!inject('controlPlaneDir'))(
    'recovers after the API server restarts mid-watch and catches changes made meanwhile',
    async () => {
      const cp = ControlPlane.attach(inject('controlPlaneDir') as string);
      await seed(5);
      // A long backoff keeps the informer away while the changes below are made.
      const informer = start({ backoffBaseMs: 2_000, backoffMaxMs: 4_000 });
      const deleted: string[] = [];
      informer.onChange((type, obj) => {
        if (type === 'DELETED') deleted.push(obj.metadata.name);
      });
      await informer.waitForSync();
      const before = informer.stats();

      await cp.restartComponent('kube-apiserver');
      const restarted = await KubeClient.create(inject('kubeconfig'));
      try {
        await restarted.create(cmPath(ns), configMap(ns, 'while-away', 'w'));
        await restarted.mergePatch(cmPath(ns, 'cm-3'), { data: { value: 'changed-while-away' } });
        await restarted.delete(cmPath(ns, 'cm-4'));
      } finally {
        await restarted.close();
      }

      await eventually(
        'cache matches the server again',
        async () => {
          const view = cacheView(informer);
          return view['while-away'] === 'w' && view['cm-3'] === 'changed-while-away' && !('cm-4' in view);
        },
        30_000,
      );
      expect(cacheView(informer)).toEqual(await serverView());
      expect(deleted).toContain('cm-4');
      const after = informer.stats();
      expect(after.watchRestarts).toBeGreaterThan(before.watchRestarts);
      // Afterwards the watch works again: a new change arrives without another list.
      const lists = after.lists;
      await client.create(cmPath(ns), configMap(ns, 'after-recovery', 'r'));
      await eventually('change after recovery', async () => cacheView(informer)['after-recovery'] === 'r');
      expect(informer.stats().lists).toBe(lists);
    },
  );

  it('re-lists when the watch stays silent longer than the watchdog allows', async () => {
    await seed(1);
    const informer = start({ watchdogMs: 1_500, watchTimeoutSeconds: 120 });
    await informer.waitForSync();
    await eventually('watchdog fired and re-listed', async () => {
      const s = informer.stats();
      return s.watchdogFires >= 1 && s.relists >= 1;
    });
    // The informer still works after the watchdog restarts it.
    await client.create(cmPath(ns), configMap(ns, 'after-watchdog', 'd'));
    await eventually('change after watchdog', async () => cacheView(informer)['after-watchdog'] === 'd');
    expect(cacheView(informer)).toEqual(await serverView());
  });

  it('keeps a busy watch alive: events reset the watchdog', async () => {
    await seed(1);
    const informer = start({ watchdogMs: 1_500, watchTimeoutSeconds: 120 });
    await informer.waitForSync();
    for (let i = 0; i < 8; i++) {
      await client.mergePatch(cmPath(ns, 'cm-0'), { data: { value: `tick-${i}` } });
      await new Promise((r) => setTimeout(r, 400));
    }
    expect(informer.stats().watchdogFires).toBe(0);
    expect(cacheView(informer)['cm-0']).toBe('tick-7');
  });

  it('metadata only: follows Secrets, including edits of their data, without ever holding the data', async () => {
    ns = await createNamespace('informer');
    await kubectlOk(['create', 'secret', 'generic', 'key', '-n', ns, '--from-literal=apiKey=first-value']);
    const secrets = new Informer<KubeObject>({
      client: client.metadataOnly(),
      apiVersion: 'v1',
      plural: 'secrets',
      namespaces: [ns],
      resyncMs: 0,
    });
    const seen: string[] = [];
    secrets.onChange((type, obj) => seen.push(`${type} ${obj.metadata.name}`));
    secrets.start();
    try {
      await secrets.waitForSync();
      expect(secrets.get(ns, 'key')).toMatchObject({
        kind: 'PartialObjectMetadata',
        metadata: { name: 'key' },
      });
      await kubectlOk(['patch', 'secret', 'key', '-n', ns, '-p', '{"stringData":{"apiKey":"second-value"}}']);
      await eventually('the data edit seen as a change', async () => seen.includes('MODIFIED key'));
      expect(secrets.get(ns, 'key')).not.toHaveProperty('data');
      expect(JSON.stringify(secrets.list())).not.toMatch(
        /first-value|second-value|Zmlyc3Qtdm|c2Vjb25kLXZhbH/,
      );
    } finally {
      await secrets.stop();
    }
  });
});
