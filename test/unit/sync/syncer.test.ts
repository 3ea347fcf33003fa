// The sync loop on real file:// bundles: the newest Secret value wins, a refused fetch keeps the
// served version and is reported (without the link), an unusable Secret is reported by key.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PodCondition } from '../../../src/sync/reporter.ts';
import type { SecretState } from '../../../src/sync/syncer.ts';
import { bundle, served, syncer, until } from '../../support/fixtures/sync-fixtures.ts';
import { tarGz } from '../../support/fixtures/tar-fixtures.ts';
import { tempDir } from '../../support/temp.ts';
import { serveDrip } from '../bundle/serve.ts';

describe('sync loop', () => {
  it('serves the newest of two quick Secret updates and reports it', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s, conditions, lines } = syncer(root);
    await store.prepare();
    const [a, b] = [await bundle('A'), await bundle('B')];
    const stop = new AbortController();
    const running = s.run(stop.signal);
    s.want({ wanted: a });
    s.want({ wanted: b });
    await until(() => conditions.at(-1)?.message === `serving ${b.version}`);
    expect(served(root)).toBe('<h1>B</h1>');
    expect(conditions.at(-1)).toEqual({
      type: 'staticexport.dev/ContentServed',
      status: 'True',
      reason: 'Serving',
      message: `serving ${b.version}`,
    });
    expect(lines.at(-1)).toBe(`serving ${b.version} (fetched)`);
    stop.abort();
    await running;
  });

  it('stops a download in progress when the Secret names a newer version, and serves that one', async () => {
    const root = tempDir('sync-root-');
    const { store, syncer: s, conditions, lines } = syncer(root);
    await store.prepare();
    // A bundle server sending a byte every second: that download would take minutes.
    const drip = await serveDrip(tarGz([{ path: 'index.html', content: '<h1>slow</h1>' }]), 1_000);
    try {
      const slow = { version: `sha256-${'5'.repeat(64)}`, source: { url: drip.url } };
      const next = await bundle('next');
      const stop = new AbortController();
      const running = s.run(stop.signal);
      s.want({ wanted: slow });
      await until(() => readdirSync(join(root, 'staging')).length > 0);
      s.want({ wanted: next });
      await until(() => conditions.at(-1)?.message === `serving ${next.version}`);
      expect(served(root)).toBe('<h1>next</h1>');
      // The superseded download is neither a failure nor left behind.
      expect(conditions.map((c) => c.reason)).toEqual(['Serving']);
      expect(lines).toEqual([`serving ${next.version} (fetched)`]);
      expect(readdirSync(join(root, 'staging'))).toEqual([]);
      stop.abort();
      await running;
    } finally {
      await drip.close();
    }
  });

  it('keeps serving after a refused fetch, reports FetchFailed without the link, retries, and a newer version supersedes it', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s, conditions, lines } = syncer(root, { minPages: 2 });
    await store.prepare();
    const good = await bundle('good', 2);
    const thin = await bundle('thin', 1);
    const next = await bundle('next', 2);
    const stop = new AbortController();
    const running = s.run(stop.signal);
    s.want({ wanted: good });
    await until(() => conditions.at(-1)?.reason === 'Serving');
    s.want({ wanted: thin });
    await until(() => conditions.at(-1)?.reason === 'FetchFailed');
    const failed = conditions.at(-1) as PodCondition;
    expect(failed.status).toBe('False');
    expect(failed.message).toMatch(
      new RegExp(`^serving ${good.version}; ${thin.version} failed: the site in the bundle was refused: `),
    );
    expect(lines.some((l) => l.startsWith(`${thin.version} failed: `))).toBe(true);
    expect(served(root)).toBe('<h1>good</h1>');
    // Retried with backoff, still refused: still the old version served.
    await until(() => lines.filter((l) => l.startsWith(`${thin.version} failed`)).length >= 2);
    s.want({ wanted: next });
    await until(() => conditions.at(-1)?.message === `serving ${next.version}`);
    expect(served(root)).toBe('<h1>next</h1>');
    stop.abort();
    await running;
  });

  it('reports an unusable Secret naming the key, and keeps serving', async () => {
    const root = tempDir('sync-');
    const { store, syncer: s, conditions } = syncer(root);
    await store.prepare();
    const a = await bundle('A');
    const stop = new AbortController();
    const running = s.run(stop.signal);
    s.want({ wanted: a });
    await until(() => conditions.at(-1)?.reason === 'Serving');
    const problem: SecretState = { problem: 'Secret docs/site has no key "version" or it is empty' };
    s.want(problem);
    await until(() => conditions.at(-1)?.reason === 'SecretUnusable');
    expect(conditions.at(-1)?.message).toBe(`serving ${a.version}; ${problem.problem}`);
    expect(served(root)).toBe('<h1>A</h1>');
    stop.abort();
    await running;
  });
});
