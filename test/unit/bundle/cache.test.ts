// The operator's bundle cache: one download per job however many releases ask, content-addressed
// verification results that survive a restart, a bound with least-recently-used eviction, no
// archive on disk and nothing left half-written.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleCache, bundleSource } from '../../../src/bundle/index.ts';
import { siteEntries, tarGz } from '../../support/fixtures/tar-fixtures.ts';

const A = tarGz(siteEntries());
const B = tarGz([...siteEntries(), { path: 'more.html', content: '<h1>More</h1>' }]);
const BAD = tarGz([{ path: '../escape.html', content: 'x' }]);
const bodies: Record<string, Buffer> = { '/a': A, '/a-again': A, '/b': B, '/bad': BAD };
const requests: string[] = [];
let base = '';
let close: () => void = () => {};

beforeAll(async () => {
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = bodies[req.url ?? ''];
    // A slow first byte, so concurrent asks overlap.
    setTimeout(() => {
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': body.length }).end(body);
    }, 50);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

const dirOf = () => mkdtempSync(join(tmpdir(), 'bundle-cache-'));
const count = (path: string) => requests.filter((r) => r === path).length;

describe('BundleCache', () => {
  it('downloads a job once however many ask at the same time, and answers later asks without downloading', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 100 });
    const before = count('/a');
    const src = bundleSource('acct', 'job-1');
    const [x, y] = await Promise.all([
      cache.fetch(src, { url: `${base}/a` }),
      cache.fetch(src, { url: `${base}/a` }),
    ]);
    expect(count('/a') - before).toBe(1);
    expect(x).toEqual(y);
    expect(x.version).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(x.site).toEqual({ pages: 2, hasIndex: true });
    expect(x.sizeBytes).toBe(A.length);
    await cache.fetch(src, { url: `${base}/a` });
    expect(count('/a') - before).toBe(1);
    // Content-addressed: the verification result, named by the archive digest; never the archive.
    expect(readdirSync(dir)).toEqual([`${x.sha256}.json`]);

    // A restarted operator (same work directory) knows it without downloading.
    const reopened = await BundleCache.open({ dir, maxEntries: 100 });
    expect(await reopened.fetch(src, { url: `${base}/a` })).toEqual(x);
    expect(count('/a') - before).toBe(1);
  });

  it('another job with the same bytes is one entry; another account or job is never answered from one it did not fetch', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 100 });
    const first = await cache.fetch(bundleSource('acct', 'job-1'), { url: `${base}/a` });
    const before = count('/a-again');
    const second = await cache.fetch(bundleSource('other', 'job-1'), { url: `${base}/a-again` });
    expect(count('/a-again') - before).toBe(1);
    expect(second.sha256).toBe(first.sha256);
    expect(readdirSync(dir)).toHaveLength(1);
    // Nothing on disk names the account or the job.
    expect(readdirSync(dir).join()).not.toContain('job-1');
  });

  it('an entry answers for the last 16 jobs that gave its bytes, not for every one since', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 100 });
    // An unchanged site, exported again at every interval: 17 jobs, the same bytes.
    for (let job = 1; job <= 17; job++)
      await cache.fetch(bundleSource('acct', `job-${job}`), { url: `${base}/a` });
    const [entry] = readdirSync(dir);
    const meta = JSON.parse(readFileSync(join(dir, entry as string), 'utf8')) as { sources: string[] };
    expect(meta.sources).toHaveLength(16);
    const before = count('/a');
    await cache.fetch(bundleSource('acct', 'job-17'), { url: `${base}/a` });
    expect(count('/a') - before).toBe(0);
    await cache.fetch(bundleSource('acct', 'job-1'), { url: `${base}/a` });
    expect(count('/a') - before).toBe(1);
  });

  it('keeps at most maxEntries results: the least recently used entry goes first', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 1 });
    const a = await cache.fetch(bundleSource('acct', 'a'), { url: `${base}/a` });
    const b = await cache.fetch(bundleSource('acct', 'b'), { url: `${base}/b` });
    expect(readdirSync(dir)).toEqual([`${b.sha256}.json`]);
    const before = count('/a');
    expect((await cache.fetch(bundleSource('acct', 'a'), { url: `${base}/a` })).version).toBe(a.version);
    expect(count('/a') - before).toBe(1);
    expect(readdirSync(dir)).toEqual([`${a.sha256}.json`]);
  });

  it('a use makes an entry the most recent, across a restart too', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 2 });
    const a = await cache.fetch(bundleSource('acct', 'a'), { url: `${base}/a` });
    await new Promise((r) => setTimeout(r, 20));
    const b = await cache.fetch(bundleSource('acct', 'b'), { url: `${base}/b` });
    await new Promise((r) => setTimeout(r, 20));
    await cache.fetch(bundleSource('acct', 'a'), { url: `${base}/a` });
    // Reopened with room for one: the least recently used (b) goes, a stays without a download.
    const reopened = await BundleCache.open({ dir, maxEntries: 1 });
    expect(readdirSync(dir)).toEqual([`${a.sha256}.json`]);
    const before = count('/a');
    expect((await reopened.fetch(bundleSource('acct', 'a'), { url: `${base}/a` })).sha256).toBe(a.sha256);
    expect(count('/a') - before).toBe(0);
    expect(b.sha256).not.toBe(a.sha256);
  });

  it('with maxEntries 0 every bundle is verified and nothing is kept', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 0 });
    const x = await cache.fetch(bundleSource('acct', 'none'), { url: `${base}/a`, expectedSize: A.length });
    expect(x.site.hasIndex).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a refused archive is not cached and leaves nothing behind', async () => {
    const dir = dirOf();
    const cache = await BundleCache.open({ dir, maxEntries: 100 });
    await expect(cache.fetch(bundleSource('acct', 'bad'), { url: `${base}/bad` })).rejects.toMatchObject({
      reason: 'UnsafeEntry',
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('one asker giving up does not stop the download another still waits for', async () => {
    const cache = await BundleCache.open({ dir: dirOf(), maxEntries: 100 });
    const src = bundleSource('acct', 'abort');
    const gaveUp = new AbortController();
    const first = cache.fetch(src, { url: `${base}/b`, signal: gaveUp.signal });
    const second = cache.fetch(src, { url: `${base}/b`, signal: new AbortController().signal });
    gaveUp.abort(new Error('deleted'));
    await expect(first).rejects.toThrow('deleted');
    expect((await second).sizeBytes).toBe(B.length);
  });

  it('removes anything but its entries at open: temporary files, archives an earlier version kept', async () => {
    const dir = dirOf();
    const kept = await (await BundleCache.open({ dir, maxEntries: 100 })).fetch(
      bundleSource('acct', 'kept'),
      {
        url: `${base}/a`,
      },
    );
    const sha = 'f'.repeat(64);
    writeFileSync(join(dir, '.incoming-1234abcd.tar.gz'), 'partial');
    writeFileSync(join(dir, '.meta-1234abcd'), '{');
    mkdirSync(join(dir, '.verify-1234abcd'));
    writeFileSync(join(dir, `${kept.sha256}.tar.gz`), 'an archive kept by an earlier version');
    writeFileSync(join(dir, `${sha}.json`), '{}');
    const before = count('/a');
    const cache = await BundleCache.open({ dir, maxEntries: 100 });
    expect(readdirSync(dir)).toEqual([`${kept.sha256}.json`]);
    expect(await cache.fetch(bundleSource('acct', 'kept'), { url: `${base}/a` })).toEqual(kept);
    expect(count('/a') - before).toBe(0);
  });
});
