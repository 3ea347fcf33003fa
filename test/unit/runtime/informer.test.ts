import { afterEach, describe, expect, it } from 'vitest';
import { type ChangeType, diffList, Informer, type KubeObject } from '../../../src/runtime/informer.ts';
import { KubeApiError } from '../../../src/runtime/kube-client.ts';
import { cm, FakeKube, until } from './fake-kube.ts';

type Change = [ChangeType, string, string | undefined, string | undefined];

function setup(opts: Partial<ConstructorParameters<typeof Informer>[0]> = {}) {
  const fake = new FakeKube();
  const informer = new Informer<KubeObject>({
    client: fake,
    apiVersion: 'v1',
    plural: 'configmaps',
    backoffBaseMs: 10,
    backoffMaxMs: 40,
    resyncMs: 0,
    ...opts,
  });
  const changes: Change[] = [];
  informer.onChange((type, obj, old) =>
    changes.push([type, obj.metadata.name, obj.metadata.resourceVersion, old?.metadata.resourceVersion]),
  );
  return { fake, informer, changes };
}

let running: Informer<KubeObject> | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe('diffList', () => {
  it('reports added, modified (by resourceVersion) and vanished objects in scope only', () => {
    const cache = new Map<string, KubeObject>([
      ['a/same', cm('a', 'same', 1)],
      ['a/changed', cm('a', 'changed', 1)],
      ['a/gone', cm('a', 'gone', 1)],
      ['b/other', cm('b', 'other', 1)],
    ]);
    const items = [cm('a', 'same', 1), cm('a', 'changed', 2), cm('a', 'new', 3)];
    const diff = diffList(cache, items, (o) => o.metadata.namespace === 'a');
    expect(diff.map((d) => [d.type, d.obj.metadata.name, d.old?.metadata.resourceVersion])).toEqual([
      ['MODIFIED', 'changed', '1'],
      ['ADDED', 'new', undefined],
      ['DELETED', 'gone', undefined],
    ]);
  });
});

describe('Informer', () => {
  it('lists, syncs, then watches from the list resourceVersion and applies events', async () => {
    const { fake, informer, changes } = setup({ watchdogMs: 60_000, pageSize: 7, labelSelector: 'app=x' });
    running = informer;
    fake.objects = [cm('a', 'one', 5), cm('b', 'two', 6)];
    informer.start();
    await informer.waitForSync();
    expect(informer.hasSynced()).toBe(true);
    expect(fake.listCalls[0]).toMatchObject({ path: '/api/v1/configmaps', pageSize: 7 });
    expect(fake.listCalls[0]?.query.labelSelector).toBe('app=x');
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['one', 'two']);
    await until('watch', () => fake.streams.length === 1);
    expect(fake.lastStream().query).toMatchObject({ resourceVersion: '100', timeoutSeconds: 48 });

    const s = fake.lastStream();
    s.send('ADDED', cm('a', 'three', 101));
    s.send('MODIFIED', cm('a', 'one', 102, { k: 'v' }));
    s.send('DELETED', cm('b', 'two', 103));
    await until('events applied', () => changes.length === 5);
    expect(changes).toEqual([
      ['ADDED', 'one', '5', undefined],
      ['ADDED', 'two', '6', undefined],
      ['ADDED', 'three', '101', undefined],
      ['MODIFIED', 'one', '102', '5'],
      ['DELETED', 'two', '103', undefined],
    ]);
    expect(informer.get('a', 'one')).toMatchObject({ data: { k: 'v' } });
    expect(informer.get('b', 'two')).toBeUndefined();
    expect(
      informer
        .list('a')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['one', 'three']);
  });

  it('keeps its indexes current through the list, adds, changes and deletes', async () => {
    const { fake, informer } = setup();
    running = informer;
    const byOwner = (o: KubeObject) => {
      const owner = (o as ReturnType<typeof cm>).data?.owner;
      return owner ? [`${o.metadata.namespace}/${owner}`] : [];
    };
    fake.objects = [cm('a', 'one', 1, { owner: 'x' }), cm('b', 'two', 2, { owner: 'x' })];
    informer.start();
    await informer.waitForSync();
    informer.addIndex('owner', byOwner);
    const filed = (value: string) => informer.byIndex('owner', value).map((o) => o.metadata.name);
    expect(filed('a/x')).toEqual(['one']);
    expect(filed('b/x')).toEqual(['two']);
    await until('watch', () => fake.streams.length === 1);
    const s = fake.lastStream();
    s.send('ADDED', cm('a', 'three', 101, { owner: 'x' }));
    s.send('MODIFIED', cm('a', 'one', 102, { owner: 'y' }));
    s.send('DELETED', cm('b', 'two', 103, { owner: 'x' }));
    await until('events applied', () => informer.get('b', 'two') === undefined);
    expect(filed('a/x')).toEqual(['three']);
    expect(filed('a/y')).toEqual(['one']);
    expect(filed('b/x')).toEqual([]);
    expect(informer.byIndex('no such index', 'a/x')).toEqual([]);

    // A value filed under by several objects, then by one again, then by none.
    s.send('ADDED', cm('a', 'four', 104, { owner: 'x' }));
    s.send('ADDED', cm('a', 'five', 105, { owner: 'x' }));
    await until('added', () => informer.get('a', 'five') !== undefined);
    expect(filed('a/x').sort()).toEqual(['five', 'four', 'three']);
    s.send('DELETED', cm('a', 'three', 106, { owner: 'x' }));
    s.send('MODIFIED', cm('a', 'four', 107, { owner: 'y' }));
    await until('moved', () => filed('a/y').length === 2);
    expect(filed('a/x')).toEqual(['five']);
    s.send('MODIFIED', cm('a', 'five', 108, { owner: 'five' }));
    await until('moved', () => filed('a/five').length === 1);
    expect(filed('a/x')).toEqual([]);
    expect(filed('a/y').sort()).toEqual(['four', 'one']);
  });

  it('keeps no managedFields in its cache, from the list or from the watch', async () => {
    const { fake, informer } = setup();
    running = informer;
    const managed = (o: ReturnType<typeof cm>) => ({
      ...o,
      metadata: { ...o.metadata, managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:data': {} } }] },
    });
    fake.objects = [managed(cm('a', 'listed', 1))];
    informer.start();
    await informer.waitForSync();
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().send('ADDED', managed(cm('a', 'watched', 2)));
    await until('watched', () => informer.get('a', 'watched') !== undefined);
    for (const o of informer.list()) expect(o.metadata).not.toHaveProperty('managedFields');
    expect(informer.list()).toHaveLength(2);
  });

  it('caches what its transform keeps of each object, from the list and from the watch', async () => {
    const fake = new FakeKube();
    const informer = new Informer<KubeObject & { owner?: string }>({
      client: fake,
      apiVersion: 'v1',
      plural: 'configmaps',
      resyncMs: 0,
      transform: (o) => ({
        metadata: {
          name: o.metadata.name,
          namespace: o.metadata.namespace,
          resourceVersion: o.metadata.resourceVersion,
        },
        owner: (o as ReturnType<typeof cm>).data.owner,
      }),
    });
    running = informer;
    fake.objects = [cm('a', 'listed', 1, { owner: 'x', bulk: 'y'.repeat(100) })];
    informer.start();
    await informer.waitForSync();
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().send('ADDED', cm('a', 'watched', 2, { owner: 'z' }));
    await until('watched', () => informer.get('a', 'watched') !== undefined);
    expect(informer.list()).toEqual([
      { metadata: { name: 'listed', namespace: 'a', resourceVersion: '1' }, owner: 'x' },
      { metadata: { name: 'watched', namespace: 'a', resourceVersion: '2' }, owner: 'z' },
    ]);
  });

  it('re-watches from the last seen resourceVersion (bookmarks included) when a stream ends', async () => {
    const { fake, informer } = setup({ watchdogMs: 60_000 });
    running = informer;
    informer.start();
    await until('watch', () => fake.streams.length === 1);
    await new Promise((r) => setTimeout(r, 1_050)); // a stream that lived a while ends normally
    fake.lastStream().send('ADDED', cm('a', 'x', 150));
    fake.lastStream().send('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '170' } });
    fake.lastStream().end();
    await until('second watch', () => fake.streams.length === 2);
    expect(fake.lastStream().query.resourceVersion).toBe('170');
    expect(fake.listCalls).toHaveLength(1);
    expect(informer.stats()).toMatchObject({ relists: 0, watchRestarts: 1 });
    expect(informer.list()).toHaveLength(1);
  });

  it('re-lists on an ERROR event with code 410 and emits synthetic deletes for vanished objects', async () => {
    const { fake, informer, changes } = setup({ watchdogMs: 60_000 });
    running = informer;
    fake.objects = [cm('a', 'stays', 1), cm('a', 'changes', 2), cm('a', 'vanishes', 3)];
    informer.start();
    await until('watch', () => fake.streams.length === 1);
    changes.length = 0;
    fake.objects = [cm('a', 'stays', 1), cm('a', 'changes', 200), cm('a', 'appears', 201)];
    fake.resourceVersion = '300';
    fake.lastStream().send('ERROR', { kind: 'Status', code: 410, message: 'too old resource version' });
    await until('re-watch', () => fake.streams.length === 2);
    expect(fake.listCalls).toHaveLength(2);
    expect(fake.lastStream().query.resourceVersion).toBe('300');
    expect(changes).toEqual([
      ['MODIFIED', 'changes', '200', '2'],
      ['ADDED', 'appears', '201', undefined],
      ['DELETED', 'vanishes', '3', undefined],
    ]);
    expect(informer.stats()).toMatchObject({ relists: 1, lists: 2 });
  });

  it('re-lists when the watch request itself fails with 410 Gone', async () => {
    const { fake, informer } = setup({ watchdogMs: 60_000 });
    running = informer;
    informer.start();
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().fail(new KubeApiError(410, 'Expired', 'expired'));
    await until('re-watch', () => fake.streams.length === 2);
    expect(fake.listCalls).toHaveLength(2);
    expect(informer.stats().relists).toBe(1);
  });

  it('restarts the watch with backoff after an error, without re-listing', async () => {
    const { fake, informer } = setup({ watchdogMs: 60_000 });
    running = informer;
    informer.start();
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().send('ADDED', cm('a', 'x', 120));
    const failedAt = Date.now();
    fake.lastStream().fail(new Error('ECONNRESET'));
    await until('re-watch', () => fake.streams.length === 2);
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(7); // base 10 ms with ±20 % jitter
    expect(fake.lastStream().query.resourceVersion).toBe('120');
    fake.lastStream().send('ERROR', { kind: 'Status', code: 500, message: 'internal' });
    await until('third watch', () => fake.streams.length === 3);
    expect(fake.listCalls).toHaveLength(1);
    expect(informer.stats().watchRestarts).toBe(2);
  });

  it('grows the backoff while watches keep failing without delivering anything', async () => {
    const { fake, informer } = setup({ watchdogMs: 60_000, backoffBaseMs: 20, backoffMaxMs: 1_000 });
    running = informer;
    informer.start();
    const created: number[] = [];
    for (let i = 1; i <= 5; i++) {
      await until(`watch ${i}`, () => fake.streams.length === i);
      created.push(Date.now());
      if (i < 5) fake.lastStream().fail(new Error('ECONNREFUSED'));
    }
    const gaps = created.slice(1).map((t, i) => t - (created[i] ?? t));
    // 20, 40, 80, 160 ms with ±20 % jitter: the last wait is clearly longer than the first.
    expect(gaps[3]).toBeGreaterThanOrEqual(120);
    expect(gaps[0]).toBeLessThan(100);
    expect(fake.listCalls).toHaveLength(1);
  });

  it('retries a failed initial list and only then reports synced', async () => {
    const { fake, informer } = setup({ watchdogMs: 60_000 });
    running = informer;
    fake.listError = new Error('connection refused');
    fake.objects = [cm('a', 'x', 1)];
    informer.start();
    expect(informer.hasSynced()).toBe(false);
    await informer.waitForSync();
    expect(fake.listCalls).toHaveLength(2);
    expect(informer.list()).toHaveLength(1);
    expect(informer.stats().relists).toBe(0);
  });

  it('gives up on a list that hangs after the watchdog time and lists again', async () => {
    const { fake, informer } = setup({ watchdogMs: 100 });
    running = informer;
    fake.hangList = true;
    fake.objects = [cm('a', 'x', 1)];
    const started = Date.now();
    informer.start();
    await informer.waitForSync();
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(fake.listCalls).toHaveLength(2);
    expect(informer.list()).toHaveLength(1);
  });

  it('aborts a silent watch after the watchdog timeout and re-lists', async () => {
    const { fake, informer } = setup({ watchdogMs: 150, watchTimeoutSeconds: 60 });
    running = informer;
    informer.start();
    await until('watch', () => fake.streams.length === 1);
    const first = fake.lastStream();
    // Events keep it alive...
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 60));
      first.send('BOOKMARK', { metadata: { resourceVersion: String(101 + i) } });
    }
    expect(fake.streams).toHaveLength(1);
    // ...silence does not.
    await until('watchdog re-list', () => fake.streams.length === 2, 2_000);
    expect(first.aborted).toBe(true);
    expect(fake.listCalls).toHaveLength(2);
    expect(informer.stats()).toMatchObject({ watchdogFires: 1, relists: 1 });
  });

  it('re-delivers every cached object on resync', async () => {
    const { fake, informer, changes } = setup({ watchdogMs: 60_000, resyncMs: 50 });
    running = informer;
    fake.objects = [cm('a', 'x', 1), cm('a', 'y', 2)];
    informer.start();
    await until('two resyncs', () => changes.filter((c) => c[0] === 'RESYNC').length >= 4);
    const resync = changes.filter((c) => c[0] === 'RESYNC').slice(0, 2);
    expect(resync).toEqual([
      ['RESYNC', 'x', '1', '1'],
      ['RESYNC', 'y', '2', '2'],
    ]);
  });

  it('runs one list-watch per namespace and re-lists one namespace without touching the other', async () => {
    const { fake, informer, changes } = setup({ watchdogMs: 60_000, namespaces: ['a', 'b'] });
    running = informer;
    fake.objects = [cm('a', 'x', 1), cm('b', 'y', 2), cm('c', 'z', 3)];
    informer.start();
    await informer.waitForSync();
    expect(fake.listCalls.map((c) => c.path).sort()).toEqual([
      '/api/v1/namespaces/a/configmaps',
      '/api/v1/namespaces/b/configmaps',
    ]);
    expect(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['x', 'y']);
    await until('watches', () => fake.streams.length === 2);
    fake.objects = [cm('b', 'y', 2)];
    const streamA = fake.streams.find((s) => s.path.includes('/namespaces/a/'));
    streamA?.send('ERROR', { code: 410 });
    await until('re-list of a', () => fake.streams.length === 3);
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['y']);
    expect(changes.at(-1)).toEqual(['DELETED', 'x', '1', undefined]);
  });

  it('keeps going when a handler throws, and stop ends the loops', async () => {
    const { fake, informer } = setup({ watchdogMs: 60_000 });
    informer.onChange(() => {
      throw new Error('handler bug');
    });
    informer.start();
    await until('watch', () => fake.streams.length === 1);
    fake.lastStream().send('ADDED', cm('a', 'x', 101));
    await until('cached', () => informer.list().length === 1);
    await informer.stop();
    expect(fake.lastStream().aborted).toBe(true);
    expect(fake.streams).toHaveLength(1);
  });
});
