import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundleError } from '../../../src/bundle/errors.ts';
import { extractTarGz } from '../../../src/bundle/extract.ts';
import { siteEntries, type TarEntrySpec, tarGz } from '../../support/tar-fixtures.ts';

let work: string;
let dest: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'extract-test-'));
  dest = join(work, 'site');
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

const extract = (archive: Buffer, options: Parameters<typeof extractTarGz>[2] = {}) =>
  extractTarGz(Readable.from([archive]), dest, options);

async function expectRefused(entries: TarEntrySpec[], reason: BundleError['reason'], limits = {}) {
  // A previous good version sits at the destination: a refused archive must leave it as it was.
  await mkdir(dest);
  await writeFile(join(dest, 'previous.html'), 'previous');
  const error = await extract(tarGz(entries), { limits }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(BundleError);
  expect((error as BundleError).reason).toBe(reason);
  expect(await readdir(dest)).toEqual(['previous.html']);
  // No temp or old directories are left beside the destination, and nothing escaped into the parent.
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

  it('replaces an existing destination and removes the old content', async () => {
    await mkdir(dest);
    await writeFile(join(dest, 'stale.html'), 'stale');
    await extract(tarGz(siteEntries()));
    expect((await readdir(dest)).sort()).toEqual(['assets', 'guides', 'index.html']);
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
    await expectRefused(many, 'TooManyFiles', { maxFiles: 10 });
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
    await mkdir(dest);
    await writeFile(join(dest, 'previous.html'), 'previous');
    const error = await extract(archive.subarray(0, archive.length - 40)).catch((e: unknown) => e);
    expect((error as BundleError).reason).toBe('Corrupt');
    expect(await readdir(dest)).toEqual(['previous.html']);
  });

  it('refuses data that is not a tar.gz', async () => {
    const error = await extract(Buffer.from('<html>Access denied</html>')).catch((e: unknown) => e);
    expect((error as BundleError).reason).toBe('Corrupt');
    await expect(readdir(dest)).rejects.toThrow();
  });

  it('checks a pinned version before touching the destination', async () => {
    await mkdir(dest);
    await writeFile(join(dest, 'previous.html'), 'previous');
    const error = await extract(tarGz(siteEntries()), { expectVersion: `sha256-${'0'.repeat(64)}` }).catch(
      (e: unknown) => e,
    );
    expect((error as BundleError).reason).toBe('VersionMismatch');
    expect(await readdir(dest)).toEqual(['previous.html']);
  });
});
