// The image's single layer: a tar of a site directory written so that the same files always give
// the same bytes (and so the same layer digest): entries sorted by path, mtime 0, and the portable
// headers of src/tar/writer.ts. Uncompressed: the bytes then depend on nothing but the content (a
// compressor's output may change between zlib versions), and pushing is hashing plus sending.
import { createHash } from 'node:crypto';
import { open, readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MARKER_FILE } from '../bundle/destination.ts';
import { type TarEntry, type TarItem, tarSize, tarStream } from '../tar/writer.ts';
import { OciError } from './errors.ts';
import type { BlobSource } from './registry.ts';

export interface SiteLayer extends BlobSource {
  /** Regular files in the layer. */
  files: number;
  /** Bytes of the regular files. */
  contentBytes: number;
}

const READ_CHUNK = 1024 * 1024;
/** Files from this size on are streamed into the layer; smaller ones are read whole. */
const STREAM_FROM = 64 * 1024;

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

/** The layer's entries with their contents, each file read only when its turn comes. */
async function* layerItems(root: string, entries: TarEntry[]): AsyncGenerator<TarItem> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  for (const entry of entries) {
    if (entry.kind !== 'file' || entry.size === 0) {
      yield entry;
    } else if (entry.size >= STREAM_FROM) {
      yield { ...entry, content: fileBytes(join(root, entry.path), entry.size, buffer) };
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
      yield { ...entry, content: small };
    }
  }
}

function layerBytes(root: string, entries: TarEntry[]): AsyncGenerator<Uint8Array> {
  return tarStream(layerItems(root, entries));
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
  const expected = tarSize(entries);
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
