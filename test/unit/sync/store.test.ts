// The sync's versioned directory with real files and the real fetch pipeline (file:// bundles):
// the served symlink only ever points at a complete tree.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VersionStore } from '../../../src/sync/store.ts';
import { bundle, served, syncer } from '../../support/fixtures/sync-fixtures.ts';
import { tempDir } from '../../support/temp.ts';

const versionsIn = (root: string) => readdirSync(join(root, 'versions')).sort();
const signal = new AbortController().signal;

describe('sync store', () => {
  it('fetches a version into versions/<version> and points current at it with a relative symlink', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root);
    await store.prepare();
    const a = await bundle('A');
    expect(await s.syncTo(a, signal)).toEqual({ kind: 'fetch', version: a.version });
    expect(served(root)).toBe('<h1>A</h1>');
    expect(readlinkSync(join(root, 'current'))).toBe(`versions/${a.version}`);
    expect(await store.served()).toBe(a.version);
    expect(readdirSync(join(root, 'staging'))).toEqual([]);
  });

  it('swaps to a kept version without downloading it again (rollback); previous points at the one replaced', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s, downloads } = syncer(root);
    await store.prepare();
    const [a, b] = [await bundle('A'), await bundle('B')];
    await s.syncTo(a, signal);
    await s.syncTo(b, signal);
    expect(served(root)).toBe('<h1>B</h1>');
    expect(readlinkSync(join(root, 'previous'))).toBe(`versions/${a.version}`);
    expect(await s.syncTo(a, signal)).toEqual({ kind: 'swap', version: a.version });
    expect(served(root)).toBe('<h1>A</h1>');
    expect(readlinkSync(join(root, 'previous'))).toBe(`versions/${b.version}`);
    expect(downloads()).toBe(2);
    expect(await s.syncTo(a, signal)).toEqual({ kind: 'serving' });
  });

  it('a page of the version replaced finds its assets in current or previous at every moment of the swap', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root);
    await store.prepare();
    const [a, b] = [await bundle('A'), await bundle('B')];
    await s.syncTo(a, signal);
    // Looked at between each of the swap's file system calls, as a web server's fallback would.
    const asset = 'index.html';
    const aOnly = () =>
      [join(root, 'current'), join(root, 'previous')].some(
        (dir) => existsSync(join(dir, asset)) && readlinkSync(dir) === `versions/${a.version}`,
      );
    const lost: string[] = [];
    let swapping = true;
    const look = () => {
      if (!aOnly()) lost.push(`current → ${readlinkSync(join(root, 'current'))}`);
      if (swapping) setImmediate(look);
    };
    setImmediate(look);
    await s.syncTo(b, signal);
    swapping = false;
    expect(served(root)).toBe('<h1>B</h1>');
    expect(lost).toEqual([]);
  });

  it('keeps the last --keep versions, the served one always, and deletes older ones after the swap', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root, { keep: 2 });
    await store.prepare();
    const [a, b, c] = [await bundle('A'), await bundle('B'), await bundle('C')];
    await s.syncTo(a, signal);
    await s.syncTo(b, signal);
    expect(versionsIn(root)).toEqual([a.version, b.version].sort());
    await s.syncTo(c, signal);
    expect(versionsIn(root)).toEqual([b.version, c.version].sort());
    // Rolling back to B makes it the most recently served: A, fetched again, then pushes out C.
    await s.syncTo(b, signal);
    await s.syncTo(a, signal);
    expect(versionsIn(root)).toEqual([a.version, b.version].sort());
    expect(served(root)).toBe('<h1>A</h1>');
  });

  it('leaves current and versions/ untouched when the fetch is refused (nothing partial)', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root, { minPages: 3 });
    await store.prepare();
    const good = await bundle('good', 3);
    await s.syncTo(good, signal);
    const thin = await bundle('thin', 1);
    await expect(s.syncTo(thin, signal)).rejects.toThrow(/refused: .*--min-pages/);
    expect(served(root)).toBe('<h1>good</h1>');
    expect(versionsIn(root)).toEqual([good.version]);
    expect(readdirSync(join(root, 'staging'))).toEqual([]);
  });

  it('refuses a bundle whose content is not the version the Secret names', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root);
    await store.prepare();
    const [a, b] = [await bundle('A'), await bundle('B')];
    await expect(s.syncTo({ version: a.version, source: b.source }, signal)).rejects.toThrow(
      new RegExp(`expected ${a.version}`),
    );
    expect(existsSync(join(root, 'current'))).toBe(false);
    expect(versionsIn(root)).toEqual([]);
  });

  it('removes what a killed process left (staging trees, temporary links) and keeps serving current', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root);
    await store.prepare();
    const a = await bundle('A');
    await s.syncTo(a, signal);
    mkdirSync(join(root, 'staging', '.sha256-x.tmp-1234'), { recursive: true });
    writeFileSync(join(root, 'staging', '.sha256-x.tmp-1234', 'index.html'), 'half');
    symlinkSync('versions/nothing', join(root, '.current.tmp-dead'));
    const restarted = new VersionStore(root);
    await restarted.prepare();
    expect(readdirSync(join(root, 'staging'))).toEqual([]);
    expect(readdirSync(root).sort()).toEqual(['current', 'staging', 'versions']);
    expect(await restarted.served()).toBe(a.version);
    expect(served(root)).toBe('<h1>A</h1>');
  });

  it('refuses a --root whose current is not its symlink (a fetch destination, say), changing nothing', async () => {
    const root = tempDir('sync-');
    mkdirSync(join(root, 'current'));
    writeFileSync(join(root, 'current', 'index.html'), 'mine');
    await expect(new VersionStore(root).prepare()).rejects.toMatchObject({
      reason: 'DestinationNotOurs',
      message: expect.stringContaining('choose a new or empty --root'),
    });
    expect(readdirSync(root)).toEqual(['current']);
  });

  it('refuses a version that is not a content version as a directory name', () => {
    const store = new VersionStore(tempDir('sync-'));
    expect(() => store.versionDir('../../etc')).toThrow(/not a content version/);
  });

  it('never points current at a missing tree while versions are swapped', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s } = syncer(root);
    await store.prepare();
    const [a, b] = [await bundle('A'), await bundle('B')];
    await s.syncTo(a, signal);
    await s.syncTo(b, signal);
    let swapping = true;
    const swaps = (async () => {
      for (let i = 0; i < 200; i++) await store.swap(i % 2 ? a.version : b.version);
      swapping = false;
    })();
    let reads = 0;
    while (swapping) {
      expect(served(root)).toMatch(/^<h1>[AB]<\/h1>$/);
      expect(lstatSync(join(root, 'current')).isSymbolicLink()).toBe(true);
      reads++;
      await new Promise((r) => setImmediate(r));
    }
    await swaps;
    expect(reads).toBeGreaterThan(0);
  });
});
