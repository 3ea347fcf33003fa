import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TarHeader, TarParser } from '../../../src/tar/parser.ts';
import { tarHeaders } from '../../../src/tar/writer.ts';
import { run } from '../../support/cluster/kube.ts';
import { tarBuffer } from '../../support/fixtures/tar-fixtures.ts';

interface Parsed extends TarHeader {
  data: string;
}

/** Parses `archive` pushed in chunks of `chunkSize` bytes; returns the entries with their data. */
function parse(archive: Buffer, chunkSize = archive.length): Parsed[] {
  const entries: Parsed[] = [];
  let ended = true;
  const parser = new TarParser({
    entry: (header) => {
      expect(ended).toBe(true);
      ended = false;
      entries.push({ ...header, data: '' });
    },
    data: (chunk) => {
      const last = entries.at(-1) as Parsed;
      last.data += chunk.toString();
    },
    end: () => {
      ended = true;
    },
  });
  for (let i = 0; i < archive.length; i += chunkSize) parser.write(archive.subarray(i, i + chunkSize));
  parser.end();
  expect(ended).toBe(true);
  return entries;
}

/** Rewrites the checksum of a header block edited by hand. */
function withChecksum(block: Buffer): void {
  block.write('        ', 148, 'ascii');
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += block[i] as number;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
}

const LONG_DIR = `${'d'.repeat(90)}/${'e'.repeat(90)}`;
const LONG_FILE = `${LONG_DIR}/${'f'.repeat(120)}.html`;

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'tar-parser-test-'));
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A tree with a long path and a long link target, archived by GNU tar in `format`. */
async function gnuTar(format: 'gnu' | 'posix'): Promise<Buffer> {
  const tree = join(work, 'tree');
  await mkdir(join(tree, LONG_DIR), { recursive: true });
  await writeFile(join(tree, 'index.html'), '<h1>Home</h1>');
  await writeFile(join(tree, LONG_FILE), 'deep');
  await symlink(LONG_FILE, join(tree, 'to-deep'));
  const archive = join(work, `${format}.tar`);
  const names = ['index.html', 'to-deep', 'd'.repeat(90)];
  const tar = await run('tar', ['--format', format, '--sort=name', '-cf', archive, '-C', tree, ...names]);
  expect(tar.code, tar.stderr).toBe(0);
  return readFile(archive);
}

describe('TarParser', () => {
  it.each(['gnu', 'posix'] as const)(
    'reads what GNU tar writes in %s format: long paths and link targets',
    async (format) => {
      const archive = await gnuTar(format);
      // Chunks of 7 bytes split every header, record and data block.
      for (const chunkSize of [archive.length, 7]) {
        const entries = parse(archive, chunkSize).map(({ path, type, data, linkpath }) => ({
          path: path.replace(/\/$/, ''),
          type,
          data,
          linkpath,
        }));
        expect(entries).toEqual([
          { path: 'index.html', type: 'File', data: '<h1>Home</h1>', linkpath: undefined },
          { path: 'to-deep', type: 'SymbolicLink', data: '', linkpath: LONG_FILE },
          { path: 'd'.repeat(90), type: 'Directory', data: '', linkpath: undefined },
          { path: LONG_DIR, type: 'Directory', data: '', linkpath: undefined },
          { path: LONG_FILE, type: 'File', data: 'deep', linkpath: undefined },
        ]);
      }
    },
  );

  it('joins the ustar prefix field to the name', () => {
    const block = tarBuffer([{ path: 'page.html', content: 'x' }]);
    block.write('docs/guides', 345, 'utf8');
    withChecksum(block);
    expect(parse(block).map((e) => e.path)).toEqual(['docs/guides/page.html']);
  });

  it('reads PAX path, link target and size records as this project writes them', () => {
    const entries = [
      { path: `${'p'.repeat(150)}.html`, kind: 'file' as const, size: 3 },
      { path: 'link', kind: 'symlink' as const, size: 0, target: 't'.repeat(120) },
    ];
    const archive = Buffer.concat([
      ...tarHeaders(entries[0] as (typeof entries)[0]),
      Buffer.from('abc'),
      Buffer.alloc(509),
      ...tarHeaders(entries[1] as (typeof entries)[1]),
      Buffer.alloc(1024),
    ]);
    expect(parse(archive, 100)).toEqual([
      { path: `${'p'.repeat(150)}.html`, type: 'File', size: 3, linkpath: undefined, data: 'abc' },
      { path: 'link', type: 'SymbolicLink', size: 0, linkpath: 't'.repeat(120), data: '' },
    ]);
  });

  it('reads a base-256 size', () => {
    const archive = tarBuffer([{ path: 'big.bin', content: 'abcd' }]);
    archive.fill(0, 124, 136);
    archive[124] = 0x80;
    archive[135] = 4;
    withChecksum(archive);
    expect(parse(archive)[0]).toMatchObject({ size: 4, data: 'abcd' });
  });

  it('accepts a checksum summed over signed bytes, as some old tars wrote it', () => {
    const archive = tarBuffer([{ path: 'café.html', content: 'x' }]);
    archive.write('        ', 148, 'ascii');
    let sum = 0;
    for (let i = 0; i < 512; i++)
      sum += (archive[i] as number) > 127 ? (archive[i] as number) - 256 : (archive[i] as number);
    archive.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    expect(parse(archive)[0]).toMatchObject({ path: 'café.html', data: 'x' });
  });

  it('takes an old-style file entry with a trailing slash as a directory', () => {
    expect(parse(tarBuffer([{ path: 'assets/', type: 'file' }]))[0]?.type).toBe('Directory');
  });

  it('names types it does not extract', () => {
    expect(parse(tarBuffer([{ path: 'dev', type: 'chardev' }]))[0]?.type).toBe('CharacterDevice');
    const odd = tarBuffer([{ path: 'sparse', content: '' }]);
    odd.write('S', 156, 'ascii');
    withChecksum(odd);
    expect(parse(odd)[0]?.type).toBe("Unsupported type 'S'");
  });

  it('stops at the first zero block, as GNU tar does', () => {
    const archive = Buffer.concat([
      tarBuffer([{ path: 'a.html', content: 'a' }]),
      Buffer.from('trailing bytes that are no tar'),
    ]);
    expect(parse(archive).map((e) => e.path)).toEqual(['a.html']);
  });

  describe('refuses', () => {
    const refuses = (archive: Buffer, message: RegExp) => expect(() => parse(archive, 64)).toThrow(message);

    it('a header whose checksum does not hold', () => {
      const archive = tarBuffer([{ path: 'a.html', content: 'a' }]);
      archive[0] = 'b'.charCodeAt(0);
      refuses(archive, /checksum mismatch/);
    });

    it('bytes that are no tar at all', () => {
      refuses(Buffer.from('<html>Access denied</html>'.repeat(40)), /checksum mismatch/);
    });

    it('a size field that is not octal', () => {
      const archive = tarBuffer([{ path: 'a.html', content: 'a' }]);
      archive.write('0000000009\0', 124, 'ascii');
      refuses(archive, /invalid size|checksum/);
    });

    it('an archive cut inside a header', () => {
      refuses(tarBuffer([{ path: 'a.html', content: 'a' }]).subarray(0, 300), /truncated/);
    });

    it('an archive cut inside an entry', () => {
      refuses(tarBuffer([{ path: 'a.html', content: 'x'.repeat(2000) }]).subarray(0, 1000), /truncated/);
    });

    it('an archive that ends after an extended header, without its entry', () => {
      const [pax, record, padding] = tarHeaders({ path: 'p'.repeat(150), kind: 'file', size: 0 });
      refuses(Buffer.concat([pax as Buffer, record as Buffer, padding as Buffer]), /without its entry/);
    });

    it('an extended header larger than any path needs', () => {
      const archive = tarBuffer([{ path: 'PaxHeaders/x', content: '', declaredSize: 2 * 1024 * 1024 }]);
      archive.write('x', 156, 'ascii');
      withChecksum(archive);
      refuses(archive, /extended header of 2097152 bytes/);
    });

    it('a PAX record whose length does not fit', () => {
      const [pax] = tarHeaders({ path: 'p'.repeat(150), kind: 'file', size: 0 });
      const record = Buffer.alloc(512);
      record.write('99 path=x\n', 0, 'utf8');
      const header = Buffer.from(pax as Buffer);
      header.write('00000000012\0', 124, 'ascii');
      withChecksum(header);
      refuses(Buffer.concat([header, record, Buffer.alloc(1024)]), /invalid PAX record/);
    });
  });
});
