import { afterEach, describe, expect, it } from 'vitest';
import { CachedReader, compareResourceVersions } from '../../../src/runtime/cached-reader.ts';
import { Informer, type KubeObject } from '../../../src/runtime/informer.ts';
import { KubeApiError } from '../../../src/runtime/kube-client.ts';
import { cm, FakeKube, until } from './fake-kube.ts';

type Obj = ReturnType<typeof cm>;

/** An informer over a fake API server, and a reader whose reads from "the API server" are counted. */
async function setup(full: boolean, objects: Obj[]) {
  const fake = new FakeKube();
  fake.objects = objects;
  const informer = new Informer<KubeObject>({
    client: fake,
    apiVersion: 'v1',
    plural: 'configmaps',
    resyncMs: 0,
  });
  running = informer;
  // What the API server holds now (the informer may not have seen it yet).
  const server = new Map<string, Obj>(objects.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
  const fetched: string[] = [];
  const reader = new CachedReader<Obj>({
    informer,
    full,
    fetch: async (ns, name) => {
      fetched.push(`${ns}/${name}`);
      const o = server.get(`${ns}/${name}`);
      if (!o) throw new KubeApiError(404, 'NotFound', `${name} not found`);
      return structuredClone(o);
    },
  });
  informer.start();
  await informer.waitForSync();
  await until('watching', () => fake.streams.length === 1);
  const send = async (type: 'ADDED' | 'MODIFIED' | 'DELETED', o: Obj) => {
    fake.lastStream().send(type, o);
    await until(`${type} ${o.metadata.name} applied`, () =>
      type === 'DELETED'
        ? informer.get(o.metadata.namespace, o.metadata.name) === undefined
        : informer.get(o.metadata.namespace, o.metadata.name)?.metadata.resourceVersion ===
          o.metadata.resourceVersion,
    );
  };
  return { informer, reader, server, fetched, send };
}

let running: Informer<KubeObject> | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe('compareResourceVersions', () => {
  it('orders integer resourceVersions numerically and refuses to order anything else', () => {
    expect(compareResourceVersions('9', '10')).toBe(-1);
    expect(compareResourceVersions('123456789012345678901', '123456789012345678900')).toBe(1);
    expect(compareResourceVersions('7', '7')).toBe(0);
    expect(compareResourceVersions('a7', '7')).toBeUndefined();
    expect(compareResourceVersions(undefined, '7')).toBeUndefined();
  });
});

describe('CachedReader over an informer of whole objects', () => {
  it('serves the cache, and its own write until the watch brings it or something newer', async () => {
    const { reader, fetched, send } = await setup(true, [cm('a', 'x', 5, { v: 'listed' })]);
    expect((await reader.get('a', 'x')).data).toEqual({ v: 'listed' });
    expect(fetched).toEqual([]);

    // Our own write (e.g. a status) answered with resourceVersion 7: a read right after sees it,
    // not the cache's older copy a reconcile would otherwise decide from.
    reader.remember(cm('a', 'x', 7, { v: 'written' }));
    expect((await reader.get('a', 'x')).data).toEqual({ v: 'written' });
    // An older event arriving late does not hide it.
    await send('MODIFIED', cm('a', 'x', 6, { v: 'older' }));
    expect((await reader.get('a', 'x')).data).toEqual({ v: 'written' });
    // Someone else's later change wins once the watch has it.
    await send('MODIFIED', cm('a', 'x', 8, { v: 'theirs' }));
    expect((await reader.get('a', 'x')).data).toEqual({ v: 'theirs' });
    expect(reader.size()).toBe(0);
    expect(fetched).toEqual([]);
  });

  it('keeps no copy of its own write when the watch delivered it before the answer arrived', async () => {
    const { reader, fetched, send } = await setup(true, [cm('a', 'x', 5, { v: 'listed' })]);
    await send('MODIFIED', cm('a', 'x', 7, { v: 'written' }));
    reader.remember(cm('a', 'x', 7, { v: 'written' }));
    expect(reader.size()).toBe(0);
    expect((await reader.get('a', 'x')).data).toEqual({ v: 'written' });
    expect(fetched).toEqual([]);
  });

  it('reads from the API server what the cache does not hold (a 404 stays a 404)', async () => {
    const { reader, fetched } = await setup(true, []);
    await expect(reader.get('a', 'gone')).rejects.toMatchObject({ status: 404 });
    expect(fetched).toEqual(['a/gone']);
  });

  it('reads from the API server when resourceVersions are not integers and cannot be ordered', async () => {
    const { reader, fetched, server } = await setup(true, [cm('a', 'x', 'opaque1')]);
    reader.remember(cm('a', 'x', 'opaque2', { v: 'written' }));
    server.set('a/x', cm('a', 'x', 'opaque3', { v: 'server' }));
    expect((await reader.get('a', 'x')).data).toEqual({ v: 'server' });
    expect(fetched).toEqual(['a/x']);
  });
});

describe('CachedReader over a metadata-only informer', () => {
  it('keeps contents read or written while the informer shows the same resourceVersion', async () => {
    const { reader, fetched, server, send } = await setup(false, [cm('a', 'key', 5, { apiKey: 'one' })]);
    expect((await reader.get('a', 'key')).data).toEqual({ apiKey: 'one' });
    expect((await reader.get('a', 'key')).data).toEqual({ apiKey: 'one' });
    expect(fetched).toEqual(['a/key']);

    // Edited (a rotated key): the informer shows a newer resourceVersion, so the content is read again.
    server.set('a/key', cm('a', 'key', 9, { apiKey: 'two' }));
    await send('MODIFIED', cm('a', 'key', 9));
    expect((await reader.get('a', 'key')).data).toEqual({ apiKey: 'two' });
    expect(fetched).toEqual(['a/key', 'a/key']);

    // Written by us: served at once, whether or not the watch has delivered it yet.
    reader.remember(cm('a', 'key', 12, { apiKey: 'three' }));
    expect((await reader.get('a', 'key')).data).toEqual({ apiKey: 'three' });
    await send('MODIFIED', cm('a', 'key', 12));
    expect((await reader.get('a', 'key')).data).toEqual({ apiKey: 'three' });
    expect(fetched).toHaveLength(2);

    // Deleted: forgotten, and a read asks the API server (which says 404).
    server.delete('a/key');
    await send('DELETED', cm('a', 'key', 13));
    expect(reader.size()).toBe(0);
    await expect(reader.get('a', 'key')).rejects.toMatchObject({ status: 404 });
  });

  it('getIfCached answers "absent" from the synced cache alone; get still asks the API server', async () => {
    const { reader, fetched } = await setup(false, [cm('a', 'present', 3, { k: 'v' })]);
    expect(await reader.getIfCached('a', 'absent')).toBeUndefined();
    expect(fetched).toEqual([]);
    expect((await reader.getIfCached('a', 'present'))?.data).toEqual({ k: 'v' });
    expect(fetched).toEqual(['a/present']);
    await expect(reader.get('a', 'absent')).rejects.toMatchObject({ status: 404 });
    // Written by us but not yet seen by the watch: known, not absent.
    reader.remember(cm('a', 'new', 20, { k: 'mine' }));
    expect((await reader.getIfCached('a', 'new'))?.data).toEqual({ k: 'mine' });
  });
});
