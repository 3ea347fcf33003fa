import { describe, expect, it } from 'vitest';
import {
  allKeys,
  cancelOnDelete,
  enqueueOnChange,
  ignoreStatusOnly,
  ownerKeys,
  type ReconcileResult,
  referrerKeys,
  refIndex,
  runController,
  splitKey,
  toKey,
} from '../../../src/runtime/controller.ts';
import { Informer, type KubeObject } from '../../../src/runtime/informer.ts';
import { Metrics } from '../../../src/runtime/metrics.ts';
import { cm, FakeKube, until } from './fake-kube.ts';

// Time between consecutive entries.
const gaps = (ts: number[]) => ts.slice(1).map((t, i) => t - (ts[i] ?? t));

const fastQueue = { baseDelayMs: 20, maxDelayMs: 200, qps: 1000, burst: 1000 };

describe('keys', () => {
  it('splits and joins namespace/name, cluster-scoped names have no slash', () => {
    expect(splitKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(splitKey('node-1')).toEqual({ namespace: undefined, name: 'node-1' });
    expect(toKey('ns', 'a')).toBe('ns/a');
    expect(toKey(undefined, 'a')).toBe('a');
  });

  it('ownerKeys maps to controller owners of the kind (and group) only', () => {
    const secret: KubeObject = {
      metadata: {
        name: 'values',
        namespace: 'ns',
        ownerReferences: [
          {
            apiVersion: 'staticexport.dev/v1alpha1',
            kind: 'StaticExportRelease',
            name: 'r1',
            uid: 'u',
            controller: true,
          },
          { apiVersion: 'staticexport.dev/v1alpha1', kind: 'StaticExportRelease', name: 'r2', uid: 'v' },
          { apiVersion: 'other.dev/v1', kind: 'StaticExportRelease', name: 'r3', uid: 'w', controller: true },
        ],
      },
    };
    expect(ownerKeys('StaticExportRelease', 'staticexport.dev')(secret)).toEqual(['ns/r1']);
    expect(ownerKeys('StaticExportRelease')(secret)).toEqual(['ns/r1', 'ns/r3']);
  });
});

describe('runController', () => {
  it.each([
    [
      'thrown',
      (): ReconcileResult => {
        throw new Error('boom');
      },
    ],
    ['asked for as a value', (): ReconcileResult => ({ backoff: new Error('boom') })],
  ])(
    'reconciles enqueued keys, retries failures (%s) with backoff, and forgets after success',
    async (_, fail) => {
      const metrics = new Metrics({ processMetrics: false });
      const calls: [string, number][] = [];
      let failuresLeft = 2;
      const c = runController({
        name: 'test',
        queue: fastQueue,
        metrics,
        reconcile: async (key) => {
          calls.push([key, Date.now()]);
          if (key === 'ns/flaky' && failuresLeft-- > 0) return fail();
        },
      });
      c.enqueue('ns/ok');
      c.enqueue('ns/flaky');
      await until('flaky succeeded', () => calls.filter(([k]) => k === 'ns/flaky').length === 3);
      await c.stop();
      const flaky = calls.filter(([k]) => k === 'ns/flaky').map(([, t]) => t);
      const [first, second] = gaps(flaky);
      expect(first).toBeGreaterThanOrEqual(19);
      expect(second).toBeGreaterThanOrEqual(39);
      expect(c.queue.numRequeues('ns/flaky')).toBe(0);
      const text = await metrics.text();
      expect(text).toContain('static_export_reconcile_total{controller="test",result="success"} 2');
      expect(text).toContain('static_export_reconcile_total{controller="test",result="error"} 2');
      expect(text).toContain('static_export_reconcile_errors_total{controller="test"} 2');
    },
  );

  it('requeues after requeueAfterMs on success', async () => {
    const times: number[] = [];
    const c = runController({
      name: 'poll',
      queue: fastQueue,
      reconcile: async () => {
        times.push(Date.now());
        return times.length < 3 ? { requeueAfterMs: 50 } : undefined;
      },
    });
    c.enqueue('ns/a');
    await until('three reconciles', () => times.length === 3);
    await new Promise((r) => setTimeout(r, 120));
    await c.stop();
    expect(times).toHaveLength(3);
    expect(gaps(times)[0]).toBeGreaterThanOrEqual(49);
  });

  it('never runs one key twice at once, even with many workers and repeated enqueues', async () => {
    const active = new Set<string>();
    let overlap = false;
    let maxParallel = 0;
    let count = 0;
    const c = runController({
      name: 'par',
      concurrency: 4,
      queue: fastQueue,
      reconcile: async (key) => {
        if (active.has(key)) overlap = true;
        active.add(key);
        maxParallel = Math.max(maxParallel, active.size);
        await new Promise((r) => setTimeout(r, 10));
        active.delete(key);
        count++;
      },
    });
    for (let round = 0; round < 5; round++) {
      for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) c.enqueue(`ns/${k}`);
      await new Promise((r) => setTimeout(r, 3));
    }
    await until('queue drained', () => c.queue.len() === 0 && active.size === 0);
    await c.stop();
    expect(overlap).toBe(false);
    expect(maxParallel).toBeGreaterThan(1);
    expect(maxParallel).toBeLessThanOrEqual(4);
    expect(count).toBeGreaterThanOrEqual(6);
  });

  it('stop drains in-flight reconciles, and aborts them at the drain deadline', async () => {
    let finished = false;
    const slow = runController({
      name: 'drain',
      reconcile: async () => {
        await new Promise((r) => setTimeout(r, 50));
        finished = true;
      },
    });
    slow.enqueue('ns/a');
    await new Promise((r) => setTimeout(r, 5));
    await slow.stop();
    expect(finished).toBe(true);

    let aborted = false;
    const stuck = runController({
      name: 'stuck',
      reconcile: (_key, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        }),
    });
    stuck.enqueue('ns/a');
    await new Promise((r) => setTimeout(r, 5));
    const started = Date.now();
    await stuck.stop(30);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(aborted).toBe(true);
  });

  it("cancelOnDelete aborts only the deleted key's reconcile in flight, without a retry, and it runs again for the deletion", async () => {
    const fake = new FakeKube();
    fake.objects = [cm('a', 'x', 1), cm('a', 'y', 1)];
    const informer = new Informer<KubeObject>({
      client: fake,
      apiVersion: 'v1',
      plural: 'configmaps',
      resyncMs: 0,
    });
    const runs: string[] = [];
    const aborted: string[] = [];
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const c = runController({
      name: 'cancel',
      concurrency: 2,
      queue: fastQueue,
      reconcile: async (key, signal) => {
        runs.push(key);
        if (runs.filter((k) => k === key).length > 1) return;
        await new Promise<void>((resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted.push(key);
            reject(signal.reason);
          });
          void held.then(resolve);
        });
      },
    });
    enqueueOnChange(informer, c);
    cancelOnDelete(informer, c);
    informer.start();
    await informer.waitForSync();
    await until('both running', () => runs.length === 2);
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().send('DELETED', cm('a', 'x', 2));
    await until('x reconciled again for the deletion', () => runs.filter((k) => k === 'a/x').length === 2);
    expect(aborted).toEqual(['a/x']);
    release();
    await c.stop();
    await informer.stop();
    expect(runs.filter((k) => k === 'a/x')).toHaveLength(2);
    expect(c.queue.numRequeues('a/x')).toBe(0);
  });

  it('referrerKeys maps a Secret to the objects in its namespace that name it; allKeys joins mappers once', () => {
    const release = (ns: string, name: string, secret: string) => ({
      metadata: { namespace: ns, name },
      spec: { credentialsSecretRef: { name: secret } },
    });
    const cache = [release('a', 'r1', 'key'), release('a', 'r2', 'other'), release('b', 'r3', 'key')];
    const filed = refIndex((r: (typeof cache)[number]) => r.spec.credentialsSecretRef.name);
    const informer = {
      byIndex: (index: string, value: string) =>
        index === 'key' ? cache.filter((r) => filed(r).includes(value)) : [],
    };
    const byKey = referrerKeys(informer, 'key');
    const secret = { metadata: { namespace: 'a', name: 'key' } };
    expect(byKey(secret)).toEqual(['a/r1']);
    expect(byKey({ metadata: { namespace: 'a', name: 'unused' } })).toEqual([]);
    expect(allKeys(byKey, () => ['a/r1', 'a/r9'])(secret, 'MODIFIED')).toEqual(['a/r1', 'a/r9']);
  });

  it('ignoreStatusOnly skips updates that changed only status, resourceVersion or managedFields', () => {
    const base = {
      apiVersion: 'staticexport.dev/v1alpha1',
      kind: 'StaticExportRelease',
      metadata: { namespace: 'ns', name: 'r', resourceVersion: '1', generation: 1, annotations: {} },
      status: { observedGeneration: 1 },
    };
    const next = (metadata: Record<string, unknown>, status = base.status) => ({
      ...base,
      metadata: { ...base.metadata, resourceVersion: '2', ...metadata },
      status,
    });
    const statusOnly = next({ managedFields: [{ manager: 'op' }] }, { observedGeneration: 2 });
    expect(ignoreStatusOnly('MODIFIED', statusOnly, base)).toBe(false);
    expect(ignoreStatusOnly('MODIFIED', next({ generation: 2 }), base)).toBe(true);
    expect(
      ignoreStatusOnly('MODIFIED', next({ annotations: { 'staticexport.dev/requested-at': 'x' } }), base),
    ).toBe(true);
    expect(ignoreStatusOnly('MODIFIED', next({ deletionTimestamp: '2026-01-01T00:00:00Z' }), base)).toBe(
      true,
    );
    expect(ignoreStatusOnly('ADDED', base)).toBe(true);
    expect(ignoreStatusOnly('RESYNC', base, base)).toBe(true);
    expect(ignoreStatusOnly('DELETED', base)).toBe(true);
  });

  it('enqueueOnChange turns informer events into keys', async () => {
    const fake = new FakeKube();
    fake.objects = [cm('a', 'x', 1)];
    const informer = new Informer<KubeObject>({
      client: fake,
      apiVersion: 'v1',
      plural: 'configmaps',
      resyncMs: 0,
    });
    const seen: string[] = [];
    enqueueOnChange(informer, { enqueue: (k) => seen.push(k) });
    informer.start();
    await informer.waitForSync();
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().send('DELETED', cm('a', 'x', 2));
    await until('delete enqueued', () => seen.length === 2);
    await informer.stop();
    expect(seen).toEqual(['a/x', 'a/x']);
  });
});
