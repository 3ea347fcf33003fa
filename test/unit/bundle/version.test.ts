import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractTarGz } from '../../../src/bundle/extract.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { siteEntries, type TarEntrySpec, tarGz } from '../../support/fixtures/tar-fixtures.ts';

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'version-test-'));
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

let counter = 0;
async function versionOf(archive: Buffer): Promise<string> {
  const dest = join(work, `site-${counter++}`);
  const result = await extractTarGz(Readable.from([archive]), dest);
  expect((await contentVersion(dest)).version).toBe(result.version);
  return result.version;
}

describe('content version', () => {
  it('is the same for the same files whatever the archive bytes', async () => {
    const a = tarGz(siteEntries(1_700_000_000), 9);
    const reordered = [...siteEntries(1_800_000_000)].reverse().map((e) => ({ ...e, mode: 0o600 }));
    const b = tarGz(reordered, 1);
    expect(a.equals(b)).toBe(false);
    expect(await versionOf(a)).toBe(await versionOf(b));
  });

  it('changes when a file changes', async () => {
    const changed = siteEntries().map(
      (e): TarEntrySpec => (e.path === 'index.html' ? { ...e, content: '<h1>Home!</h1>' } : e),
    );
    expect(await versionOf(tarGz(siteEntries()))).not.toBe(await versionOf(tarGz(changed)));
  });

  it('changes when a file moves', async () => {
    const moved = siteEntries().map(
      (e): TarEntrySpec => (e.path === 'index.html' ? { ...e, path: 'home.html' } : e),
    );
    expect(await versionOf(tarGz(siteEntries()))).not.toBe(await versionOf(tarGz(moved)));
  });

  it('changes when a symlink target changes', async () => {
    const link = (linkpath: string): TarEntrySpec[] => [
      ...siteEntries(),
      { path: 'latest', type: 'symlink', linkpath },
    ];
    expect(await versionOf(tarGz(link('index.html')))).not.toBe(
      await versionOf(tarGz(link('guides/start.html'))),
    );
  });
});
