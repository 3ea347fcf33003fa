import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { collectYoung } from '../gc.ts';
import { type TarHeader, TarParser } from '../tar/parser.ts';
import { assertReplaceable, MARKER_FILE, siblingPath, swapInto } from './destination.ts';
import type { EntryWriter } from './entry-writer.ts';
import { BundleError } from './errors.ts';
import { type BundleLimits, resolveLimits } from './limits.ts';
import type { SiteSummary } from './site-check.ts';
import { DiskSink, NO_SINK, type TreeSink, TreeWriter } from './tree-writer.ts';
import type { ContentSummary } from './version.ts';

export interface ExtractOptions {
  limits?: Partial<BundleLimits>;
  /** Replace the destination even when it holds content this tool did not extract there. */
  force?: boolean;
  /** The stream is a plain tar (an OCI image layer) rather than a tar.gz bundle. */
  uncompressed?: boolean;
}

/** What an archive holds: its content version and counts, and the site's pages. */
export interface ArchiveSummary extends ContentSummary {
  site: SiteSummary;
}

/** Content extracted into a temp dir beside the destination, not yet visible there. */
export interface StagedExtraction extends ArchiveSummary {
  dir: string;
  /** Moves the content into the destination, replacing what was there; returns the destination. */
  commit(): Promise<string>;
  /** Deletes the staged content (safe to call after a failed commit). */
  discard(): Promise<void>;
}

// Each inflated chunk is parsed and written before the next one is inflated: at most this much
// tar data (about 128 entry headers) is in memory at a time.
const INFLATE_CHUNK = 64 * 1024;
// Below this much output the ratio says little (headers of a tiny archive compress very well).
const RATIO_FLOOR_BYTES = 1024 * 1024;
// Inflated bytes between young-generation collections (see gc.ts): at 2 or 4 MiB a 200 MiB bundle
// pushed to a registry took 1 full collection instead of 25 (8 MiB: 11-16). Since the download
// hands on 256 KiB chunks, 2 MiB costs no measurable CPU over 4 MiB and peaks 9 MiB lower.
const COLLECT_EVERY_BYTES = 2 * 1024 * 1024;

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
 * Decides for each entry, before anything touches the disk, whether it may be written; tracks the
 * caps and the links created so far. Returns the entry's normalized path, or the refusal instead
 * of throwing so the caller can stop.
 */
function createEntryPolicy(limits: BundleLimits): (entry: TarHeader) => BundleError | string {
  let entries = 0;
  let bytes = 0;
  const regularFiles = new Set<string>();
  const symlinks = new Set<string>();

  const check = (entry: TarHeader): string => {
    entries += 1;
    if (entries > limits.maxEntries) {
      throw new BundleError('TooManyFiles', `archive has more than ${limits.maxEntries} entries`);
    }
    const parts = splitArchivePath(entry.path, 'path');
    const path = parts.join('/');
    if (parts.length === 0 && entry.type !== 'Directory') {
      throw new BundleError('UnsafeEntry', `archive entry of type ${entry.type} replaces the root`);
    }
    if (path === MARKER_FILE) {
      throw new BundleError(
        'UnsafeEntry',
        `archive entry ${path} has the name reserved for the tool's marker`,
      );
    }
    // Writing through a link the archive itself created could land anywhere the link points.
    if (symlinks.size > 0) {
      for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
        const prefix = path.slice(0, slash);
        if (symlinks.has(prefix))
          throw new BundleError('UnsafeEntry', `archive path ${path} passes through symlink ${prefix}`);
      }
    }
    switch (entry.type) {
      case 'Directory':
        regularFiles.delete(path);
        symlinks.delete(path);
        return path;
      case 'File':
      case 'OldFile':
      case 'ContiguousFile':
        bytes += entry.size;
        if (bytes > limits.maxExtractedBytes) {
          throw new BundleError('TooLarge', `archive content exceeds ${limits.maxExtractedBytes} bytes`);
        }
        regularFiles.add(path);
        symlinks.delete(path);
        return path;
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
        return path;
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
        return path;
      }
      default:
        throw new BundleError('UnsafeEntry', `archive entry ${path} has unsupported type ${entry.type}`);
    }
  };

  return (entry) => {
    try {
      return check(entry);
    } catch (error) {
      if (error instanceof BundleError) return error;
      throw error;
    }
  };
}

/** Maps tar, zlib and fs failures to bundle errors. */
function toBundleError(error: unknown): BundleError {
  if (error instanceof BundleError) return error;
  const e = error as NodeJS.ErrnoException;
  const message = e?.message ?? String(error);
  if (e?.syscall) return new BundleError('Io', message, { cause: error });
  return new BundleError('Corrupt', `not a valid tar.gz bundle: ${message}`, { cause: error });
}

const NESTED_MAGIC = [Buffer.from([0x1f, 0x8b]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd])];

/**
 * Parses inflated tar bytes and writes the entries; calls back on each chunk only once its
 * entries are on disk, which holds back the inflater and the download behind it. The writes are
 * synchronous, so once a chunk is refused or fails nothing is left writing.
 */
class ExtractSink extends Writable {
  private readonly parser = new TarParser({
    entry: (header) => this.onEntry(header),
    data: (chunk) => {
      if (this.writing) this.writer.data(chunk);
    },
    end: () => {
      if (this.writing) this.writer.end();
      this.writing = false;
    },
  });
  /** The current entry is a file being written (its data goes to the writer). */
  private writing = false;
  private readonly admit: ReturnType<typeof createEntryPolicy>;
  private readonly writer: EntryWriter;
  private readonly limits: BundleLimits;
  private readonly compressedBytes: () => number;
  private failure: unknown;
  private inflated = 0;

  constructor(writer: EntryWriter, limits: BundleLimits, compressedBytes: () => number) {
    super();
    this.writer = writer;
    this.limits = limits;
    this.compressedBytes = compressedBytes;
    this.admit = createEntryPolicy(limits);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // The inflater hands a chunk on from inside its callback and queues the next chunk's inflation
    // in the thread pool only once that returns: taking the chunk on the next tick lets the pool
    // inflate while these entries are written, instead of each waiting for the other.
    process.nextTick(() => this.take(chunk, callback));
  }

  /** Parses an inflated chunk and writes its entries, then calls back. */
  private take(chunk: Buffer, callback: (error?: Error | null) => void): void {
    if (this.inflated === 0 && NESTED_MAGIC.some((magic) => chunk.subarray(0, magic.length).equals(magic))) {
      this.fail(new BundleError('Corrupt', 'the archive is compressed twice; expected a tar.gz bundle'));
    }
    const before = this.inflated;
    this.inflated += chunk.length;
    if (Math.floor(this.inflated / COLLECT_EVERY_BYTES) > Math.floor(before / COLLECT_EVERY_BYTES))
      collectYoung();
    const ratio = this.inflated / Math.max(1, this.compressedBytes());
    if (this.inflated > RATIO_FLOOR_BYTES && ratio > this.limits.maxCompressionRatio) {
      this.fail(
        new BundleError(
          'TooLarge',
          `archive compression ratio exceeds ${this.limits.maxCompressionRatio} (${ratio.toFixed(0)}:1 so far): a compression bomb or padding`,
        ),
      );
    }
    this.parse(() => this.parser.write(chunk));
    this.flush(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.parse(() => this.parser.end());
    this.flush(callback);
  }

  /** Runs the parser unless the extraction already failed; a malformed archive fails it. */
  private parse(step: () => void): void {
    if (this.failure) return;
    try {
      step();
    } catch (error) {
      this.fail(error);
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.writer.stop();
    callback(error);
  }

  /** Writes what the parser queued, then calls back with the first failure, if any. */
  private flush(callback: (error?: Error | null) => void): void {
    const done = () => callback(this.failure ? toBundleError(this.failure) : null);
    let taken: Promise<void> | undefined;
    if (!this.failure) {
      try {
        taken = this.writer.flush() ?? undefined;
      } catch (error) {
        this.fail(error);
      }
    }
    if (!taken) {
      done();
      return;
    }
    taken.then(done, (error: unknown) => {
      this.fail(error);
      done();
    });
  }

  private fail(error: unknown): void {
    // The first cause is the one reported; whatever follows from it is noise.
    this.failure ??= error;
    this.writing = false;
    this.writer.stop();
  }

  private onEntry(entry: TarHeader): void {
    const path = this.failure ? undefined : this.admit(entry);
    if (path === undefined || path instanceof BundleError) {
      if (path) this.fail(path);
      return;
    }
    switch (entry.type) {
      case 'Directory':
        this.writer.dir(path);
        return;
      case 'SymbolicLink':
        this.writer.symlink(path, entry.linkpath ?? '');
        return;
      case 'Link':
        this.writer.link(path, splitArchivePath(entry.linkpath ?? '', 'hardlink target').join('/'));
        return;
      default:
        // The policy admits regular files only besides the types above.
        this.writer.file(path, entry.size);
        this.writing = true;
    }
  }
}

/**
 * Parses a tar.gz stream (a plain tar with `uncompressed`) under the safety policy and caps, and
 * hands the admitted entries to `writer`; nothing is still writing when this settles.
 */
export async function unpackWith(
  source: Readable,
  writer: EntryWriter,
  limits: BundleLimits,
  options: { uncompressed?: boolean; inflateChunk?: number } = {},
): Promise<void> {
  try {
    if (options.uncompressed) {
      // No compression, no ratio to watch: the caps on files and bytes still hold.
      await pipeline(source, new ExtractSink(writer, limits, () => Number.POSITIVE_INFINITY));
    } else {
      const inflate = createGunzip({ chunkSize: options.inflateChunk ?? INFLATE_CHUNK });
      await pipeline(source, inflate, new ExtractSink(writer, limits, () => inflate.bytesWritten));
    }
  } finally {
    writer.stop();
  }
}

/** Unpacks a tar.gz (or plain tar) stream into `sink`; nothing is still writing there when this settles. */
async function unpackInto(
  source: Readable,
  sink: TreeSink,
  limits: BundleLimits,
  uncompressed = false,
): Promise<ArchiveSummary> {
  const writer = new TreeWriter(sink);
  await unpackWith(source, writer, limits, { uncompressed });
  return { ...(await writer.summary()), site: writer.site() };
}

/**
 * Checks an archive stream as `stageExtraction` would (safety policy, caps, content version,
 * pages) without writing anything: for a verification whose files nobody reads.
 */
export async function inspectArchive(
  source: Readable,
  options: ExtractOptions = {},
): Promise<ArchiveSummary> {
  try {
    return await unpackInto(source, NO_SINK, resolveLimits(options.limits), options.uncompressed);
  } catch (error) {
    source.destroy();
    throw toBundleError(error);
  }
}

/**
 * Extracts a tar.gz stream into a temp dir beside `dest` under the safety policy and caps, and
 * computes its content version. Nothing appears at `dest` until `commit()`; on failure the temp
 * dir is already gone. Refuses (DestinationNotOurs) to replace a `dest` this tool did not
 * create, unless `force`.
 */
export async function stageExtraction(
  source: Readable,
  dest: string,
  options: ExtractOptions = {},
): Promise<StagedExtraction> {
  const target = resolve(dest);
  const guard = () => (options.force ? Promise.resolve() : assertReplaceable(target));
  let dir: string | undefined;
  try {
    await guard();
    await mkdir(dirname(target), { recursive: true });
    dir = await mkdtemp(siblingPath(target, 'tmp'));
  } catch (error) {
    source.destroy();
    throw toBundleError(error);
  }
  const staged = dir;
  const discard = () => rm(staged, { recursive: true, force: true });
  try {
    const summary = await unpackInto(
      source,
      new DiskSink(staged),
      resolveLimits(options.limits),
      options.uncompressed,
    );
    return {
      ...summary,
      dir: staged,
      discard,
      commit: async () => {
        await guard();
        await swapInto(staged, target);
        return target;
      },
    };
  } catch (error) {
    source.destroy();
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
