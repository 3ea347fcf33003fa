import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MARKER_FILE } from '../../../src/bundle/destination.ts';
import { BundleError } from '../../../src/bundle/errors.ts';
import { extractTarGz, inspectArchive, stageExtraction } from '../../../src/bundle/extract.ts';
import { summarizeSite } from '../../../src/bundle/site-check.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { tarStream } from '../../../src/tar/writer.ts';
import { run } from '../../support/cluster/kube.ts';
import { siteEntries, type TarEntrySpec, tarGz } from '../../support/fixtures/tar-fixtures.ts';
import { NODE } from '../../support/tools/run-cli.ts';

let work: string;
let dest: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'extract-test-'));
  dest = join(work, 'site');
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A previous good version at the destination, as an earlier extraction left it (with its marker). */
async function previousVersion(): Promise<void> {
  await mkdir(dest);
  await writeFile(join(dest, 'previous.html'), 'previous');
  await writeFile(join(dest, MARKER_FILE), '');
}
const PREVIOUS = [MARKER_FILE, 'previous.html'];
const listing = async (dir: string) => (await readdir(dir)).sort();

/** Network-sized chunks, as a download delivers them. */
function chunked(archive: Buffer, size = 16 * 1024): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < archive.length; i += size) yield archive.subarray(i, i + size);
    })(),
  );
}

const extract = (archive: Buffer, options: Parameters<typeof extractTarGz>[2] = {}) =>
  extractTarGz(chunked(archive), dest, options);

const smallFiles = (count: number): TarEntrySpec[] =>
  Array.from({ length: count }, (_, i) => ({
    path: `pages/${Math.floor(i / 500)}/page-${i}.html`,
    content: `<p>${i}</p>`,
  }));

async function expectRefused(
  entries: TarEntrySpec[],
  reason: BundleError['reason'],
  limits = {},
  archive = tarGz(entries),
) {
  // A previous good version sits at the destination: a refused archive must leave it as it was.
  await previousVersion();
  const error = await extract(archive, { limits }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(BundleError);
  expect((error as BundleError).reason).toBe(reason);
  expect(await listing(dest)).toEqual(PREVIOUS);
  // No temp or old directories are left beside the destination, and nothing escaped into the parent.
  expect((await readdir(work)).sort()).toEqual(['site']);
  // A verification that writes nothing (the operator's cache) refuses it for the same reason.
  const inspected = await inspectArchive(chunked(archive), { limits }).catch((e: unknown) => e);
  expect(inspected).toBeInstanceOf(BundleError);
  expect((inspected as BundleError).reason).toBe(reason);
  expect((await readdir(work)).sort()).toEqual(['site']);
  return error as BundleError;
}

describe('extractTarGz', () => {
  it('extracts a site and reports files, bytes and version', async () => {
    const result = await extract(tarGz(siteEntries()));
    expect(result.path).toBe(dest);
    expect(result.files).toBe(3);
    expect(result.bytes).toBe('<h1>Home</h1>'.length + 'body{margin:0}'.length + '<h1>Start</h1>'.length);
    expect(result.version).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(await readFile(join(dest, 'guides/start.html'), 'utf8')).toBe('<h1>Start</h1>');
  });

  it('replaces a destination it extracted before and removes the old content', async () => {
    await previousVersion();
    await extract(tarGz(siteEntries()));
    expect(await listing(dest)).toEqual([MARKER_FILE, 'assets', 'guides', 'index.html']);
    expect((await readdir(work)).sort()).toEqual(['site']);
  });

  it('keeps in-bundle relative symlinks and hardlinks', async () => {
    await extract(
      tarGz([
        ...siteEntries(),
        { path: 'guides/latest', type: 'symlink', linkpath: '../index.html' },
        { path: 'copy.html', type: 'hardlink', linkpath: 'index.html' },
      ]),
    );
    expect(await readlink(join(dest, 'guides/latest'))).toBe('../index.html');
    expect(await readFile(join(dest, 'copy.html'), 'utf8')).toBe('<h1>Home</h1>');
  });

  it('inspecting writes nothing and reports what extracting reports, pages as a walk of the site finds them', async () => {
    const archive = tarGz([
      ...siteEntries(),
      { path: 'guides/latest', type: 'symlink', linkpath: '../index.html' },
      { path: 'copy.html', type: 'hardlink', linkpath: 'index.html' },
      { path: '404.html', content: 'not found' },
      { path: 'docs/404.html', content: 'a page of its own' },
      { path: 'old/', type: 'dir' },
      { path: 'old/gone.html', content: 'replaced below' },
      { path: 'old', content: 'now a file' },
      { path: 'index.html', content: '<h1>Home again</h1>' },
      { path: 'guides/start.html', type: 'dir' },
    ]);
    const inspected = await inspectArchive(chunked(archive));
    expect(await readdir(work)).toEqual([]);
    const staged = await stageExtraction(chunked(archive), dest);
    try {
      const { dir: _, commit: __, discard: ___, ...extracted } = staged;
      expect(inspected).toEqual(extracted);
      expect(inspected.site).toEqual(await summarizeSite(staged.dir));
      // index (counted once), the copy and docs/404: not the root error page, not the files replaced
      // (by a file, by a directory), not the symlink.
      expect(inspected.site).toEqual({ pages: 3, hasIndex: true });
      expect(inspected.version).toBe((await contentVersion(staged.dir)).version);
    } finally {
      await staged.discard();
    }
  });

  it('refuses `..` traversal', async () => {
    const error = await expectRefused([{ path: '../evil.html', content: 'x' }], 'UnsafeEntry');
    expect(error.message).toContain('..');
  });

  it('refuses traversal hidden inside a path', async () => {
    await expectRefused([...siteEntries(), { path: 'guides/../../evil.html', content: 'x' }], 'UnsafeEntry');
  });

  it('refuses absolute paths', async () => {
    const error = await expectRefused([{ path: `${work}/evil.html`, content: 'x' }], 'UnsafeEntry');
    expect(error.message).toContain('absolute');
  });

  it('refuses a symlink pointing outside the root', async () => {
    await expectRefused(
      [
        { path: 'a/', type: 'dir' },
        { path: 'a/out', type: 'symlink', linkpath: '../../x' },
      ],
      'UnsafeEntry',
    );
  });

  it('refuses an absolute symlink', async () => {
    await expectRefused([{ path: 'etc', type: 'symlink', linkpath: '/etc' }], 'UnsafeEntry');
  });

  it('refuses a symlink whose target only looks contained (`..` after a symlinked name)', async () => {
    await expectRefused(
      [
        // d/up resolves to the root, so d/escape -> up/.. is the root's parent, while the text
        // d/up/.. normalizes to d (node-tar alone accepts this).
        { path: 'd/', type: 'dir' },
        { path: 'd/up', type: 'symlink', linkpath: '..' },
        { path: 'd/escape', type: 'symlink', linkpath: 'up/..' },
      ],
      'UnsafeEntry',
    );
  });

  it('refuses writing through a symlink the archive created', async () => {
    await expectRefused(
      [
        { path: 'dir/', type: 'dir' },
        { path: 'link', type: 'symlink', linkpath: 'dir' },
        { path: 'link/file.html', content: 'x' },
      ],
      'UnsafeEntry',
    );
  });

  it('refuses a hardlink to a path outside the root', async () => {
    await expectRefused(
      [{ path: 'passwd', type: 'hardlink', linkpath: '../../../etc/passwd' }],
      'UnsafeEntry',
    );
  });

  it('refuses a hardlink to something not extracted before it', async () => {
    await expectRefused([{ path: 'passwd', type: 'hardlink', linkpath: 'etc/passwd' }], 'UnsafeEntry');
  });

  it.each(['chardev', 'blockdev', 'fifo'] as const)('refuses %s entries', async (type) => {
    const error = await expectRefused([...siteEntries(), { path: 'dev', type }], 'UnsafeEntry');
    expect(error.message).toMatch(/unsupported type/);
  });

  it('refuses more entries than the cap', async () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ path: `p${i}.html`, content: 'x' }));
    await expectRefused(many, 'TooManyFiles', { maxEntries: 10 });
  });

  it('refuses a compression bomb beyond the byte cap', async () => {
    // 8 MiB of zeros compresses to a few KiB.
    await expectRefused([{ path: 'zeros.bin', content: Buffer.alloc(8 * 1024 * 1024) }], 'TooLarge', {
      maxExtractedBytes: 1024 * 1024,
    });
  });

  it('refuses a header claiming more than the default cap before reading any data', async () => {
    await expectRefused([{ path: 'huge.bin', content: 'x', declaredSize: 5 * 1024 ** 3 }], 'TooLarge');
  });

  it('refuses a truncated archive', async () => {
    const archive = tarGz([{ path: 'big.bin', content: Buffer.alloc(4096, 1) }]);
    await previousVersion();
    const error = await extract(archive.subarray(0, archive.length - 40)).catch((e: unknown) => e);
    expect((error as BundleError).reason).toBe('Corrupt');
    expect(await listing(dest)).toEqual(PREVIOUS);
  });

  it('refuses data that is not a tar.gz', async () => {
    const error = await extract(Buffer.from('<html>Access denied</html>')).catch((e: unknown) => e);
    expect((error as BundleError).reason).toBe('Corrupt');
    await expect(readdir(dest)).rejects.toThrow();
  });

  it('checks a pinned version before touching the destination', async () => {
    await previousVersion();
    const error = await extract(tarGz(siteEntries()), { expectVersion: `sha256-${'0'.repeat(64)}` }).catch(
      (e: unknown) => e,
    );
    expect((error as BundleError).reason).toBe('VersionMismatch');
    expect(await listing(dest)).toEqual(PREVIOUS);
  });

  it('refuses an escaping entry after 5,000 files with that reason, once nothing is writing any more', async () => {
    const error = await expectRefused(
      [...smallFiles(5000), { path: '../escape.txt', content: Buffer.alloc(56 * 1024, 'e') }],
      'UnsafeEntry',
    );
    expect(error.message).toContain('../escape.txt');
  });

  it('refuses a truncated gzip of 5,000 files as Corrupt and leaves nothing behind', async () => {
    const archive = tarGz(smallFiles(5000));
    await previousVersion();
    const error = await extract(archive.subarray(0, Math.floor(archive.length * 0.7))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).reason).toBe('Corrupt');
    expect(await listing(dest)).toEqual(PREVIOUS);
    expect(await listing(work)).toEqual(['site']);
  });

  it('a write that fails after 5,000 files (a name too long for the disk) leaves nothing behind', async () => {
    const pages = [...smallFiles(5000), { path: `pages/${'x'.repeat(300)}.html`, content: 'too long' }];
    const tar: Uint8Array[] = [];
    const items = pages.map(({ path, content }) => {
      const bytes = Buffer.from(content ?? '');
      return { path, kind: 'file' as const, size: bytes.length, content: bytes };
    });
    for await (const chunk of tarStream(items)) tar.push(chunk);
    await previousVersion();
    const error = await extract(gzipSync(Buffer.concat(tar))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).reason).toBe('Io');
    expect((error as BundleError).message).toContain('ENAMETOOLONG');
    expect(await listing(dest)).toEqual(PREVIOUS);
    expect(await listing(work)).toEqual(['site']);
  });

  it('extracts 10,000 entries within a 24 MB heap (parses no further ahead than it writes)', async () => {
    const archivePath = join(work, 'many.tar.gz');
    await writeFile(
      archivePath,
      tarGz(
        Array.from({ length: 10_000 }, (_, i) => ({ path: `d${Math.floor(i / 1000)}/e${i}`, content: '' })),
      ),
    );
    const child = await run(NODE, [
      '--max-old-space-size=24',
      fileURLToPath(new URL('./extract-child.ts', import.meta.url)),
      archivePath,
      dest,
    ]);
    expect(child.code, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ files: 10_000 });
  });

  it('refuses gzip -1 zeros (ratio about 229) by default; the ratio cap is configurable', async () => {
    const bomb = tarGz([{ path: 'zeros.bin', content: Buffer.alloc(64 * 1024 * 1024) }], 1);
    const error = await expectRefused([], 'TooLarge', {}, bomb);
    expect(error.message).toMatch(/compression ratio exceeds 150/);
    await rm(dest, { recursive: true });
    const accepted = await extract(bomb, { limits: { maxCompressionRatio: 1000 } });
    expect(accepted.bytes).toBe(64 * 1024 * 1024);
  });

  it('refuses a gzip inside the gzip', async () => {
    const error = await expectRefused([], 'Corrupt', {}, gzipSync(tarGz(siteEntries())));
    expect(error.message).toContain('compressed twice');
  });

  it('refuses to replace a non-empty directory it did not create, unless forced', async () => {
    await mkdir(dest);
    await writeFile(join(dest, 'notes.txt'), 'mine');
    const error = await extract(tarGz(siteEntries())).catch((e: unknown) => e);
    expect((error as BundleError).reason).toBe('DestinationNotOurs');
    expect(await listing(dest)).toEqual(['notes.txt']);
    expect(await listing(work)).toEqual(['site']);

    await extract(tarGz(siteEntries()), { force: true });
    expect(await listing(dest)).toEqual([MARKER_FILE, 'assets', 'guides', 'index.html']);
  });

  it('extracts into an empty directory and marks what it extracted', async () => {
    await mkdir(dest);
    const result = await extract(tarGz(siteEntries()));
    expect(await readFile(join(dest, MARKER_FILE), 'utf8')).toContain('static-export');
    // The marker is not content: the version is the same as the content's alone.
    expect((await contentVersion(dest)).version).toBe(result.version);
  });

  it('refuses an archive entry with the marker name', async () => {
    await expectRefused([...siteEntries(), { path: MARKER_FILE, content: 'x' }], 'UnsafeEntry');
  });
});
