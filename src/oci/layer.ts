// The image's single layer: a tar of a site directory written so that the same files always give
// the same bytes (and so the same layer digest): entries sorted by path, mtime 0, uid/gid 0 with
// no user names, mode 0755 for directories and 0644 for files (whatever the disk says), ustar
// headers with PAX records only for paths or link targets longer than ustar holds. Uncompressed:
// the bytes then depend on nothing but the content (a compressor's output may change between zlib
// versions), and pushing is hashing plus sending.
import { createHash } from 'node:crypto';
import { open, readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MARKER_FILE } from '../bundle/destination.ts';
import { OciError } from './errors.ts';
import type { BlobSource } from './registry.ts';

/** One tar entry as this module writes it. */
export interface TarEntry {
  /** Relative path with `/` separators (directories without a trailing slash). */
  path: string;
  kind: 'dir' | 'file' | 'symlink';
  size: number;
  target?: string;
}

export interface SiteLayer extends BlobSource {
  /** Regular files in the layer. */
  files: number;
  /** Bytes of the regular files. */
  contentBytes: number;
}

const BLOCK = 512;
/** Two zero blocks end a tar archive. */
export const TAR_END_BYTES = 2 * BLOCK;
const READ_CHUNK = 1024 * 1024;
const MODE = { dir: 0o755, file: 0o644, symlink: 0o777 } as const;

async function listEntries(root: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const pending = [''];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    for (const item of await readdir(join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${item.name}` : item.name;
      if (rel === MARKER_FILE) continue;
      if (item.isDirectory()) {
        entries.push({ path: rel, kind: 'dir', size: 0 });
        pending.push(rel);
      } else if (item.isFile()) {
        entries.push({ path: rel, kind: 'file', size: (await stat(join(root, rel))).size });
      } else if (item.isSymbolicLink()) {
        entries.push({ path: rel, kind: 'symlink', size: 0, target: await readlink(join(root, rel)) });
      } else {
        throw new OciError(
          'InvalidImage',
          `${join(root, rel)} is a special file; a site holds files, directories and links`,
        );
      }
    }
  }
  // Plain code-unit order, as the content version sorts: a directory comes before what it holds.
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function writeString(block: Buffer, offset: number, length: number, value: string): void {
  block.write(value, offset, Math.min(length, Buffer.byteLength(value)), 'utf8');
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

function header(name: string, type: string, size: number, mode: number, linkname = ''): Buffer {
  const block = Buffer.alloc(BLOCK);
  writeString(block, 0, 100, name);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, 0);
  block.write(type, 156, 1, 'ascii');
  writeString(block, 157, 100, linkname);
  block.write('ustar\0' + '00', 257, 8, 'ascii');
  // Checksum: sum of the header bytes with the checksum field read as spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  // The length counts its own digits.
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

/** Zero bytes after `size` bytes of data up to the next 512-byte block. */
export function tarPadding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

/** Header blocks of one entry (a PAX header first when a name does not fit ustar). */
export function tarHeaders(entry: TarEntry): Buffer[] {
  const name = entry.kind === 'dir' ? `${entry.path}/` : entry.path;
  const target = entry.target ?? '';
  const records: string[] = [];
  if (Buffer.byteLength(name) > 100) records.push(paxRecord('path', name));
  if (Buffer.byteLength(target) > 100) records.push(paxRecord('linkpath', target));
  // Octal size field holds up to 8 GiB - 1.
  if (entry.size > 0o77777777777) records.push(paxRecord('size', String(entry.size)));
  const blocks: Buffer[] = [];
  if (records.length > 0) {
    const pax = Buffer.from(records.join(''), 'utf8');
    blocks.push(
      header('PaxHeaders/entry', 'x', pax.length, 0o644),
      pax,
      Buffer.alloc(tarPadding(pax.length)),
    );
  }
  const type = entry.kind === 'dir' ? '5' : entry.kind === 'symlink' ? '2' : '0';
  const size = entry.kind === 'file' ? Math.min(entry.size, 0o77777777777) : 0;
  blocks.push(header(name.slice(0, 100), type, size, MODE[entry.kind], target.slice(0, 100)));
  return blocks;
}

function layerSize(entries: TarEntry[]): number {
  let size = 2 * BLOCK;
  for (const entry of entries) {
    for (const block of tarHeaders(entry)) size += block.length;
    if (entry.kind === 'file') size += entry.size + tarPadding(entry.size);
  }
  return size;
}

async function* fileBytes(path: string, size: number, buffer: Buffer): AsyncGenerator<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    let left = size;
    while (left > 0) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, left), null);
      if (bytesRead === 0) throw new OciError('InvalidImage', `${path} shrank while it was being packaged`);
      left -= bytesRead;
      // Copied: the buffer is reused for the next read while this chunk may still be in flight.
      yield Buffer.from(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
}

async function* layerBytes(root: string, entries: TarEntry[]): AsyncGenerator<Uint8Array> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  // Small headers are gathered so a many-file site is not sent one 512-byte chunk at a time.
  let batch: Buffer[] = [];
  let batched = 0;
  const flush = function* (): Generator<Uint8Array> {
    if (batched > 0) yield Buffer.concat(batch, batched);
    batch = [];
    batched = 0;
  };
  for (const entry of entries) {
    for (const block of tarHeaders(entry)) {
      batch.push(block);
      batched += block.length;
    }
    if (entry.kind === 'file' && entry.size > 0) {
      if (entry.size >= 64 * 1024) {
        yield* flush();
        yield* fileBytes(join(root, entry.path), entry.size, buffer);
      } else {
        const small = Buffer.allocUnsafe(entry.size);
        const handle = await open(join(root, entry.path), 'r');
        try {
          const { bytesRead } = await handle.read(small, 0, entry.size, 0);
          if (bytesRead !== entry.size)
            throw new OciError('InvalidImage', `${entry.path} changed while it was being packaged`);
        } finally {
          await handle.close();
        }
        batch.push(small);
        batched += small.length;
      }
      const pad = tarPadding(entry.size);
      if (pad > 0) {
        batch.push(Buffer.alloc(pad));
        batched += pad;
      }
    }
    if (batched >= READ_CHUNK) yield* flush();
  }
  batch.push(Buffer.alloc(2 * BLOCK));
  batched += 2 * BLOCK;
  yield* flush();
}

/** Skips the first `offset` bytes of a stream (a resumed upload). */
async function* skip(source: AsyncIterable<Uint8Array>, offset: number): AsyncGenerator<Uint8Array> {
  let left = offset;
  for await (const chunk of source) {
    if (left >= chunk.length) {
      left -= chunk.length;
      continue;
    }
    yield left > 0 ? chunk.subarray(left) : chunk;
    left = 0;
  }
}

/**
 * The layer of the site under `root` as a blob source: listed and hashed once here, produced again
 * from the files on each `open` (no copy on disk). Files changing in between make the upload fail
 * its digest check.
 */
export async function siteLayer(root: string): Promise<SiteLayer> {
  const entries = await listEntries(root);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of layerBytes(root, entries)) {
    hash.update(chunk);
    size += chunk.length;
  }
  const expected = layerSize(entries);
  if (size !== expected)
    throw new OciError('InvalidImage', `files under ${root} changed while they were being packaged`);
  let files = 0;
  let contentBytes = 0;
  for (const entry of entries) {
    if (entry.kind !== 'file') continue;
    files += 1;
    contentBytes += entry.size;
  }
  return {
    digest: `sha256:${hash.digest('hex')}`,
    size,
    files,
    contentBytes,
    open: (offset = 0) => (offset > 0 ? skip(layerBytes(root, entries), offset) : layerBytes(root, entries)),
  };
}
