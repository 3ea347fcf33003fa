// The publish gate: what counts as a page, which sites it refuses and why (with the numbers), and
// that a refused site never replaces the destination.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BundleError,
  checkPublishGate,
  DEFAULT_GATE,
  fetchBundle,
  type GateLimits,
  type SiteSummary,
  summarizeSite,
} from '../../../src/bundle/index.ts';
import { type TarEntrySpec, tarGz } from '../../support/fixtures/tar-fixtures.ts';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gate-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

async function site(files: string[], dirs: string[] = []): Promise<string> {
  const root = await mkdtemp(join(work, 'site-'));
  for (const d of dirs) await mkdir(join(root, d), { recursive: true });
  for (const f of files) {
    await mkdir(dirname(join(root, f)), { recursive: true });
    await writeFile(join(root, f), 'x');
  }
  return root;
}

describe('summarizeSite', () => {
  it('counts .html and .htm files at any depth, and sees the root index.html', async () => {
    const root = await site([
      'index.html',
      'guides/install.html',
      'guides/deep/a.HTM',
      'assets/site.css',
      'sitemap.xml',
    ]);
    expect(await summarizeSite(root)).toEqual({ pages: 3, hasIndex: true });
  });

  it('does not count the root 404.html error page; a nested index.html is not the root one', async () => {
    const root = await site(['404.html', 'guides/index.html', 'guides/404.html']);
    expect(await summarizeSite(root)).toEqual({ pages: 2, hasIndex: false });
  });

  it('a site of directories only has 0 pages and no index', async () => {
    expect(await summarizeSite(await site([], ['assets', 'guides/deep']))).toEqual({
      pages: 0,
      hasIndex: false,
    });
  });

  it('does not count a symlink named like a page', async () => {
    const root = await site(['a.html']);
    await symlink('a.html', join(root, 'index.html'));
    expect(await summarizeSite(root)).toEqual({ pages: 1, hasIndex: false });
  });
});

describe('checkPublishGate', () => {
  const summary = (pages: number, hasIndex = true): SiteSummary => ({ pages, hasIndex });
  const limits = (over: Partial<GateLimits> = {}): GateLimits => ({ ...DEFAULT_GATE, ...over });
  const cases: [string, SiteSummary, GateLimits, number | undefined, string | undefined][] = [
    ['a normal site, first publish', summary(10), limits(), undefined, undefined],
    [
      '0 pages',
      summary(0, false),
      limits(),
      undefined,
      'it has no index.html at its root; it has 0 pages, fewer than the minimum of 1',
    ],
    ['no index.html', summary(5, false), limits(), 5, 'it has no index.html at its root'],
    ['no index.html, not required', summary(5, false), limits({ requireIndex: false }), 5, undefined],
    [
      'fewer than minPages',
      summary(3),
      limits({ minPages: 4 }),
      undefined,
      'it has 3 pages, fewer than the minimum of 4',
    ],
    ['minPages 0 accepts an empty site', summary(0), limits({ minPages: 0 }), undefined, undefined],
    ['a drop of exactly 50%', summary(50), limits(), 100, undefined],
    [
      'a drop of 51%',
      summary(49),
      limits(),
      100,
      'its page count dropped from 100 to 49 (51%, more than the allowed 50%)',
    ],
    ['a drop of 90% with 100% allowed', summary(10), limits({ maxPageDropPercent: 100 }), 100, undefined],
    [
      'any drop with 0% allowed',
      summary(99),
      limits({ maxPageDropPercent: 0 }),
      100,
      'its page count dropped from 100 to 99 (1%, more than the allowed 0%)',
    ],
    ['growth', summary(300), limits({ maxPageDropPercent: 0 }), 100, undefined],
    ['no baseline (served before page counts were recorded)', summary(1), limits(), undefined, undefined],
    ['a served site of 0 pages is no baseline', summary(1), limits(), 0, undefined],
  ];
  it.each(cases)('%s', (_what, s, l, served, message) => {
    const verdict = checkPublishGate(s, l, served);
    expect(verdict).toEqual(message === undefined ? { ok: true } : { ok: false, message });
  });
});

describe('fetchBundle with a gate', () => {
  async function archive(entries: TarEntrySpec[]): Promise<string> {
    const path = join(await mkdtemp(join(work, 'archive-')), 'bundle.tar.gz');
    await writeFile(path, tarGz(entries));
    return pathToFileURL(path).href;
  }

  it('reports the site summary of what it fetched', async () => {
    const url = await archive([
      { path: 'index.html', content: 'home' },
      { path: 'guides/a.html', content: 'a' },
    ]);
    const fetched = await fetchBundle({ url, dest: join(work, 'summary') });
    expect(fetched.site).toEqual({ pages: 2, hasIndex: true });
  });

  it('a refusing gate leaves the destination as it was (an archive of directories only)', async () => {
    const dest = join(work, 'kept');
    await fetchBundle({ url: await archive([{ path: 'index.html', content: 'old home' }]), dest });
    const empty = await archive([
      { path: 'assets/', type: 'dir' },
      { path: 'guides/', type: 'dir' },
    ]);
    const seen: SiteSummary[] = [];
    const error = await fetchBundle({
      url: empty,
      dest,
      gate: (s) => {
        seen.push(s);
        throw new BundleError('PublishGate', 'refused');
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleError);
    expect(seen).toEqual([{ pages: 0, hasIndex: false }]);
    expect(await readFile(join(dest, 'index.html'), 'utf8')).toBe('old home');
  });
});
