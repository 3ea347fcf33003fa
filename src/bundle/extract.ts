import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { type ReadEntry, Unpack } from 'tar';
import { BundleError } from './errors.ts';
import { type BundleLimits, resolveLimits } from './limits.ts';
import { type ContentSummary, contentVersion } from './version.ts';

export interface ExtractOptions {
  limits?: Partial<BundleLimits>;
}

/** Content extracted into a temp dir beside the destination, not yet visible there. */
export interface StagedExtraction extends ContentSummary {
  dir: string;
  /** Moves the content into the destination, replacing what was there; returns the destination. */
  commit(): Promise<string>;
  /** Deletes the staged content (safe to call after a failed commit). */
  discard(): Promise<void>;
}

// Files are written world-readable whatever the archive says: the web server may run as another
// user, and no bundle has a reason to carry setuid or exec bits.
const FILE_MODE = 0o644;
const DIR_MODE = 0o755;

/** Splits an archive path into safe components, or says why it is refused. */
function splitArchivePath(raw: string, what: string): string[] {
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.includes('\\')) {
    throw new BundleError('UnsafeEntry', `archive ${what} is absolute: ${raw}`);
  }
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new BundleError('UnsafeEntry', `archive ${what} contains '..': ${raw}`);
  return parts;
}

/**
 * Decides for each entry, before node-tar touches the disk, whether it may be written; tracks the
 * caps and the links created so far. Returns the refusal instead of throwing so the caller can abort.
 */
function createEntryPolicy(limits: BundleLimits): (entry: ReadEntry) => BundleError | undefined {
  let entries = 0;
  let bytes = 0;
  const regularFiles = new Set<string>();
  const symlinks = new Set<string>();

  const check = (entry: ReadEntry): void => {
    entries += 1;
    if (entries > limits.maxFiles) {
      throw new BundleError('TooManyFiles', `archive has more than ${limits.maxFiles} entries`);
    }
    const parts = splitArchivePath(entry.path, 'path');
    const path = parts.join('/');
    if (parts.length === 0 && entry.type !== 'Directory') {
      throw new BundleError('UnsafeEntry', `archive entry of type ${entry.type} replaces the root`);
    }
    // Writing through a link the archive itself created could land anywhere the link points.
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (symlinks.has(prefix))
        throw new BundleError('UnsafeEntry', `archive path ${path} passes through symlink ${prefix}`);
    }
    switch (entry.type) {
      case 'Directory':
        entry.mode = DIR_MODE;
        regularFiles.delete(path);
        symlinks.delete(path);
        return;
      case 'File':
      case 'OldFile':
      case 'ContiguousFile':
        bytes += entry.size;
        if (bytes > limits.maxExtractedBytes) {
          throw new BundleError('TooLarge', `archive content exceeds ${limits.maxExtractedBytes} bytes`);
        }
        entry.mode = FILE_MODE;
        regularFiles.add(path);
        symlinks.delete(path);
        return;
      case 'SymbolicLink': {
        const target = entry.linkpath ?? '';
        if (target.startsWith('/') || /^[A-Za-z]:/.test(target)) {
          throw new BundleError('UnsafeEntry', `symlink ${path} points to absolute path ${target}`);
        }
        // Only `../../name/name` shapes: leading `..` walk up real directories (no entry passes
        // through a symlink), then names descend. A `..` after a name could undo a symlinked name
        // and escape even though the text looks contained.
        const segments = target.split('/').filter((s) => s !== '' && s !== '.');
        const ups = segments.findIndex((s) => s !== '..');
        const upCount = ups === -1 ? segments.length : ups;
        if (segments.slice(upCount).includes('..')) {
          throw new BundleError(
            'UnsafeEntry',
            `symlink ${path} has '..' after a name in its target ${target}`,
          );
        }
        if (upCount > parts.length - 1) {
          throw new BundleError('UnsafeEntry', `symlink ${path} points outside the bundle: ${target}`);
        }
        symlinks.add(path);
        regularFiles.delete(path);
        return;
      }
      case 'Link': {
        const target = splitArchivePath(entry.linkpath ?? '', 'hardlink target').join('/');
        if (!regularFiles.has(target)) {
          throw new BundleError(
            'UnsafeEntry',
            `hardlink ${path} targets ${target}, not a file extracted before it`,
          );
        }
        regularFiles.add(path);
        symlinks.delete(path);
        return;
      }
      default:
        throw new BundleError('UnsafeEntry', `archive entry ${path} has unsupported type ${entry.type}`);
    }
  };

  return (entry) => {
    try {
      check(entry);
      return undefined;
    } catch (error) {
      if (error instanceof BundleError) return error;
      throw error;
    }
  };
}

/** Maps node-tar, zlib and fs failures to bundle errors. */
function toBundleError(error: unknown): BundleError {
  if (error instanceof BundleError) return error;
  const e = error as NodeJS.ErrnoException & { tarCode?: string };
  const message = e?.message ?? String(error);
  if (e?.name === 'SymlinkError') return new BundleError('UnsafeEntry', message, { cause: error });
  if (/decompression ratio/.test(message)) return new BundleError('TooLarge', message, { cause: error });
  if (e?.syscall) return new BundleError('Io', `${message}`, { cause: error });
  return new BundleError('Corrupt', `not a valid tar.gz bundle: ${message}`, { cause: error });
}

async function unpackInto(source: Readable, dir: string, limits: BundleLimits): Promise<void> {
  const admit = createEntryPolicy(limits);
  await new Promise<void>((resolvePromise, reject) => {
    let refusal: BundleError | undefined;
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      source.unpipe(unpack);
      source.destroy();
      reject(refusal ?? toBundleError(error));
    };
    const unpack = new Unpack({
      cwd: dir,
      strict: true,
      preserveOwner: false,
      filter: (_path, entry) => {
        if (settled || !('header' in entry)) return false;
        refusal = admit(entry);
        if (!refusal) return true;
        unpack.abort(refusal);
        return false;
      },
    });
    unpack.on('error', fail);
    unpack.on('close', () => {
      if (!settled) {
        settled = true;
        resolvePromise();
      }
    });
    source.on('error', (error) => {
      fail(error);
      unpack.abort(toBundleError(error));
    });
    source.pipe(unpack);
  });
}

function siblingPath(dest: string, label: string): string {
  return join(dirname(dest), `.${basename(dest)}.${label}-${randomBytes(4).toString('hex')}`);
}

/** Replaces `dest` with `staged`: the old content is renamed away first, then deleted. */
async function swapInto(staged: string, dest: string): Promise<void> {
  try {
    await rename(staged, dest);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR') {
      throw ioError(error, dest);
    }
  }
  const old = siblingPath(dest, 'old');
  try {
    await rename(dest, old);
  } catch (error) {
    throw ioError(error, dest);
  }
  try {
    await rename(staged, dest);
  } catch (error) {
    await rename(old, dest).catch(() => undefined);
    throw ioError(error, dest);
  }
  await rm(old, { recursive: true, force: true });
}

function ioError(error: unknown, dest: string): BundleError {
  const code = (error as NodeJS.ErrnoException).code;
  const hint =
    code === 'EXDEV' || code === 'EBUSY'
      ? ' (the destination must be an ordinary directory, not a mount point: use a subdirectory of the volume)'
      : '';
  return new BundleError('Io', `cannot move the bundle into ${dest}: ${(error as Error).message}${hint}`, {
    cause: error,
  });
}

/**
 * Extracts a tar.gz stream into a temp dir beside `dest` under the safety policy and caps, and
 * computes its content version. Nothing appears at `dest` until `commit()`; on failure the temp
 * dir is already gone.
 */
export async function stageExtraction(
  source: Readable,
  dest: string,
  options: ExtractOptions = {},
): Promise<StagedExtraction> {
  const target = resolve(dest);
  await mkdir(dirname(target), { recursive: true });
  const dir = await mkdtemp(siblingPath(target, 'tmp'));
  // Retries: after an abort node-tar may still be finishing writes it had already started.
  const discard = () => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
  try {
    await unpackInto(source, dir, resolveLimits(options.limits));
    const summary = await contentVersion(dir);
    return {
      ...summary,
      dir,
      discard,
      commit: async () => {
        await swapInto(dir, target);
        return target;
      },
    };
  } catch (error) {
    await discard();
    throw toBundleError(error);
  }
}

/** Stages, checks the pinned version if any, and commits: `dest` is either the new content or untouched. */
export async function extractTarGz(
  source: Readable,
  dest: string,
  options: ExtractOptions & { expectVersion?: string } = {},
): Promise<ContentSummary & { path: string }> {
  const staged = await stageExtraction(source, dest, options);
  try {
    assertVersion(staged.version, options.expectVersion);
    const path = await staged.commit();
    return { version: staged.version, files: staged.files, bytes: staged.bytes, path };
  } catch (error) {
    await staged.discard();
    throw error;
  }
}

export function assertVersion(actual: string, expected: string | undefined): void {
  if (expected !== undefined && actual !== expected) {
    throw new BundleError('VersionMismatch', `bundle content is version ${actual}, expected ${expected}`);
  }
}
