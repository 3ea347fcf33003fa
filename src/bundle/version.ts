import { createHash } from 'node:crypto';
import { open, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { BundleError } from './errors.ts';

export interface ContentSummary {
  /** `sha256-<hex>` over sorted relative paths and per-file content digests. */
  version: string;
  /** Regular files and symlinks counted in the version. */
  files: number;
  /** Total bytes of the regular files. */
  bytes: number;
}

interface TreeItem {
  /** Relative path with `/` separators. */
  path: string;
  kind: 'file' | 'symlink';
}

const READ_CHUNK = 1024 * 1024;
// Overlaps file I/O with hashing; more than a few brings nothing on small machines.
const HASH_CONCURRENCY = 4;

async function listTree(root: string): Promise<TreeItem[]> {
  const items: TreeItem[] = [];
  const pending = [''];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(rel);
      else if (entry.isFile()) items.push({ path: rel, kind: 'file' });
      else if (entry.isSymbolicLink()) items.push({ path: rel, kind: 'symlink' });
      else throw new BundleError('UnsafeEntry', `unexpected special file in bundle content: ${rel}`);
    }
  }
  // Plain code-unit order: stable and independent of the archive's entry order.
  return items.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
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
  const digests = new Array<string>(items.length);
  let bytes = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    const buffer = Buffer.allocUnsafe(READ_CHUNK);
    while (next < items.length) {
      const index = next++;
      const item = items[index] as TreeItem;
      const abs = join(root, item.path);
      if (item.kind === 'symlink') {
        digests[index] = createHash('sha256')
          .update(await readlink(abs))
          .digest('hex');
      } else {
        const { hex, size } = await digestFile(abs, buffer);
        digests[index] = hex;
        bytes += size;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, items.length) }, worker));
  const total = createHash('sha256');
  items.forEach((item, index) => {
    // NUL separators: paths cannot contain NUL, so the encoding is unambiguous.
    total.update(`${item.kind === 'file' ? 'f' : 'l'}\0${item.path}\0${digests[index]}\0`);
  });
  return { version: `sha256-${total.digest('hex')}`, files: items.length, bytes };
}

const VERSION_PATTERN = /^sha256-[0-9a-f]{64}$/;

export function isContentVersion(value: string): boolean {
  return VERSION_PATTERN.test(value);
}
