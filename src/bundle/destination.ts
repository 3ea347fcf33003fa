import { randomBytes } from 'node:crypto';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BundleError } from './errors.ts';

/**
 * Written at the root of every extracted site: proves a directory holds content this tool put
 * there, so replacing it destroys nothing else. Not part of the content version.
 */
export const MARKER_FILE = '.static-export';
export const MARKER_CONTENT =
  'Extracted by static-export: this directory is replaced as a whole on the next fetch.\n';

export function siblingPath(dest: string, label: string): string {
  return join(dirname(dest), `.${basename(dest)}.${label}-${randomBytes(4).toString('hex')}`);
}

/**
 * Refuses to replace `dest` when it holds something this tool did not create: a non-empty
 * directory without the marker, or anything that is not a directory. Absent or empty is fine.
 */
export async function assertReplaceable(dest: string): Promise<void> {
  let names: string[];
  try {
    const stats = await lstat(dest);
    if (!stats.isDirectory()) {
      throw new BundleError('DestinationNotOurs', `${dest} exists and is not a directory`);
    }
    names = await readdir(dest);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    if (error instanceof BundleError) throw error;
    throw new BundleError('Io', `cannot inspect ${dest}: ${(error as Error).message}`, { cause: error });
  }
  if (names.length > 0 && !names.includes(MARKER_FILE)) {
    throw new BundleError(
      'DestinationNotOurs',
      `${dest} is a non-empty directory that static-export did not create (no ${MARKER_FILE} marker in it)`,
    );
  }
}

function moveError(error: unknown, dest: string): BundleError {
  const code = (error as NodeJS.ErrnoException).code;
  const hint =
    code === 'EXDEV' || code === 'EBUSY'
      ? ' (the destination must be an ordinary directory, not a mount point: use a subdirectory of the volume)'
      : '';
  return new BundleError('Io', `cannot move the bundle into ${dest}: ${(error as Error).message}${hint}`, {
    cause: error,
  });
}

/** Replaces `dest` with `staged`: the old content is renamed away first, then deleted. */
export async function swapInto(staged: string, dest: string): Promise<void> {
  try {
    await rename(staged, dest);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR') {
      throw moveError(error, dest);
    }
  }
  const old = siblingPath(dest, 'old');
  try {
    await rename(dest, old);
  } catch (error) {
    throw moveError(error, dest);
  }
  try {
    await rename(staged, dest);
  } catch (error) {
    await rename(old, dest).catch(() => undefined);
    throw moveError(error, dest);
  }
  await rm(old, { recursive: true, force: true });
}
