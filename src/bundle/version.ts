import { createHash } from 'node:crypto';
import { open, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MARKER_FILE } from './destination.ts';
import { BundleError } from './errors.ts';
import { sortInSlices } from './sort-in-slices.ts';

export interface ContentSummary {
  /** `sha256-<hex>` over sorted relative paths and per-file content digests. */
  version: string;
  /** Regular files and symlinks counted in the version. */
  files: number;
  /** Total bytes of the regular files. */
  bytes: number;
}

interface DigestedItem {
  /** Relative path with `/` separators. */
  path: string;
  kind: 'file' | 'symlink';
  /** Hex sha256 of the file's content or of the symlink's target text. */
  digest: string;
}

const READ_CHUNK = 1024 * 1024;
// How long computing a version holds the event loop before it lets other callbacks run: the lines
// of 200,000 paths took 100-200 ms to hash in one go.
const SLICE_MS = 10;
// Lines are hashed in batches (the same bytes): one update per line took twice as long.
const BATCH_CHARS = 64 * 1024;
// Overlaps file I/O with hashing; more than a few brings nothing on small machines.
const HASH_CONCURRENCY = 4;

/** Files and symlinks under `root`, digests still empty. */
async function listTree(root: string): Promise<DigestedItem[]> {
  const items: DigestedItem[] = [];
  const pending = [''];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (rel === MARKER_FILE) continue;
      if (entry.isDirectory()) pending.push(rel);
      else if (entry.isFile()) items.push({ path: rel, kind: 'file', digest: '' });
      else if (entry.isSymbolicLink()) items.push({ path: rel, kind: 'symlink', digest: '' });
      else throw new BundleError('UnsafeEntry', `unexpected special file in bundle content: ${rel}`);
    }
  }
  return items;
}

/** What the version covers of a path; directories (and anything without a digest) are skipped. */
export interface TreeEntry {
  kind: 'file' | 'symlink' | 'dir';
  /** Hex sha256 of the file's content or of the symlink's target text. */
  digest?: string;
}

/**
 * The version line over a tree, keyed by relative path. Shared by the extractor (digests
 * computed while writing), the layer writer and `contentVersion` (digests read back).
 */
export async function versionOf(tree: ReadonlyMap<string, TreeEntry>): Promise<string> {
  // Only the keys are copied (sorted by plain code units: independent of the archive's order).
  const paths = await sortInSlices([...tree.keys()], SLICE_MS);
  const total = createHash('sha256');
  let batch = '';
  let sliceStart = performance.now();
  for (const path of paths) {
    const entry = tree.get(path) as TreeEntry;
    if (entry.kind === 'dir' || entry.digest === undefined) continue;
    // NUL separators: paths cannot contain NUL, so the encoding is unambiguous.
    batch += `${entry.kind === 'file' ? 'f' : 'l'}\0${path}\0${entry.digest}\0`;
    if (batch.length < BATCH_CHARS) continue;
    total.update(batch);
    batch = '';
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  total.update(batch);
  return `sha256-${total.digest('hex')}`;
}

/** Hashes a file through `buffer`, reused across files: no per-chunk garbage, so memory stays flat. */
async function digestFile(path: string, buffer: Buffer): Promise<{ hex: string; size: number }> {
  const handle = await open(path, 'r');
  try {
    const hash = createHash('sha256');
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
    return { hex: hash.digest('hex'), size };
  } finally {
    await handle.close();
  }
}

/**
 * The content version of an extracted bundle: identical files give the same version whatever the
 * archive's bytes (timestamps, entry order, compression), any changed byte or path changes it.
 */
export async function contentVersion(root: string): Promise<ContentSummary> {
  const items = await listTree(root);
  let bytes = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    const buffer = Buffer.allocUnsafe(READ_CHUNK);
    while (next < items.length) {
      const index = next++;
      const item = items[index] as DigestedItem;
      const abs = join(root, item.path);
      if (item.kind === 'symlink') {
        item.digest = createHash('sha256')
          .update(await readlink(abs))
          .digest('hex');
      } else {
        const { hex, size } = await digestFile(abs, buffer);
        item.digest = hex;
        bytes += size;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, items.length) }, worker));
  const tree = new Map(items.map((item) => [item.path, item]));
  return { version: await versionOf(tree), files: items.length, bytes };
}

const VERSION_PATTERN = /^sha256-[0-9a-f]{64}$/;

export function isContentVersion(value: string): boolean {
  return VERSION_PATTERN.test(value);
}
