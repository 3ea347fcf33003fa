import { createHash, type Hash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { join } from 'node:path';
import { MARKER_CONTENT, MARKER_FILE } from './destination.ts';
import type { EntryWriter } from './entry-writer.ts';
import { BundleError } from './errors.ts';
import { isPage, type SiteSummary } from './site-check.ts';
import { type ContentSummary, versionOf } from './version.ts';

// World-readable whatever the archive or the umask say: the web server may run as another user,
// and no bundle has a reason to carry setuid or exec bits.
const FILE_MODE = 0o644;
const DIR_MODE = 0o755;

type Node =
  | { kind: 'dir' }
  | { kind: 'file'; digest: string; size: number }
  | { kind: 'symlink'; digest: string };

const DIR: Node = { kind: 'dir' };
// The longest one flush holds the event loop before it lets other callbacks run (the download's
// socket, timers, an operator's watches): creating a file costs hundreds of microseconds on a busy
// disk, so the 128 entries of one inflated chunk can take 100 ms.
const SLICE_MS = 10;
// Shared by every empty file: an archive of many empty files costs a map entry each, no more.
const EMPTY_FILE: Node = { kind: 'file', digest: createHash('sha256').digest('hex'), size: 0 };

type Op =
  | { op: 'dir'; path: string }
  | { op: 'file'; path: string }
  | { op: 'data'; chunk: Buffer }
  | { op: 'end' }
  | { op: 'symlink'; path: string; target: string }
  | { op: 'link'; path: string; target: string };

interface OpenFile {
  path: string;
  handle: number;
  /** Created with the first data: most entries of a many-file bundle may be empty. */
  hash: Hash | undefined;
  size: number;
}

/**
 * Where a TreeWriter's entries land. The writer decides (order, replacement, safety); the sink only
 * carries it out. Paths are relative and already admitted; a path is cleared (`remove`) before it
 * is created again.
 */
export interface TreeSink {
  dir(path: string): void;
  /** Creates an empty file; returns the handle its data and close use. */
  file(path: string): number;
  write(handle: number, chunks: readonly Buffer[], length: number): void;
  close(handle: number): void;
  symlink(path: string, target: string): void;
  link(path: string, target: string): void;
  remove(path: string, isDir: boolean): void;
}

/**
 * Nothing is written: the archive is parsed, checked and digested only (what a verification needs,
 * at a fraction of the cost of writing thousands of files and removing them again).
 */
export const NO_SINK: TreeSink = {
  dir() {},
  file: () => -1,
  write() {},
  close() {},
  symlink() {},
  link() {},
  remove() {},
};

/**
 * The local disk under `root`, synchronously: a bundle is mostly small files, and three
 * thread-pool round trips per file (open, write, close) made extraction several times slower than
 * tar on a busy machine. Measured again with one creation at a time in the thread pool and the
 * writes here: about 30 % longer and a third more CPU on two busy cores, the hand-offs costing more
 * than the overlap gained (several directories' files at once through the pool was slower still).
 * The writer lets the event loop run between slices of work (one creation on an overloaded disk
 * can still take longer).
 */
export class DiskSink implements TreeSink {
  private readonly root: string;
  /** Whether the umask strips bits of FILE_MODE, so each file needs an explicit chmod. */
  private readonly chmodFiles: boolean;

  /** Makes `root` world-readable and writes the marker (which also probes the umask). */
  constructor(root: string) {
    this.root = root;
    chmodSync(root, DIR_MODE);
    const fd = openSync(join(root, MARKER_FILE), 'wx', FILE_MODE);
    try {
      writeSync(fd, MARKER_CONTENT);
      this.chmodFiles = (fstatSync(fd).mode & 0o777) !== FILE_MODE;
      if (this.chmodFiles) fchmodSync(fd, FILE_MODE);
    } finally {
      closeSync(fd);
    }
  }

  dir(path: string): void {
    const abs = join(this.root, path);
    mkdirSync(abs, { mode: DIR_MODE });
    // mkdir's mode is filtered by the umask.
    chmodSync(abs, DIR_MODE);
  }

  file(path: string): number {
    // `wx`: the path was just cleared, so an existing one means something raced us; never follow it.
    return openSync(join(this.root, path), 'wx', FILE_MODE);
  }

  write(fd: number, chunks: readonly Buffer[], length: number): void {
    // Regular files on a local disk take the whole write; loop anyway rather than assume it.
    let written = chunks.length === 1 ? writeSync(fd, chunks[0] as Buffer) : writevSync(fd, [...chunks]);
    while (written < length) {
      const rest = Buffer.concat(chunks).subarray(written);
      written += writeSync(fd, rest);
    }
  }

  close(fd: number): void {
    try {
      if (this.chmodFiles) fchmodSync(fd, FILE_MODE);
    } finally {
      closeSync(fd);
    }
  }

  symlink(path: string, target: string): void {
    symlinkSync(target, join(this.root, path));
  }

  link(path: string, target: string): void {
    linkSync(join(this.root, target), join(this.root, path));
  }

  remove(path: string, isDir: boolean): void {
    if (isDir) rmSync(join(this.root, path), { recursive: true });
    else unlinkSync(join(this.root, path));
  }
}

/**
 * Lays archive entries (already admitted by the safety policy) into a sink, one at a time: entries
 * are queued while the tar parser runs, then `flush()` writes them, so the parser never gets
 * further ahead than the disk. Tracks what it wrote, with content digests computed on the way,
 * which gives the content version and the site's pages without reading anything back.
 */
export class TreeWriter implements EntryWriter {
  private readonly tree = new Map<string, Node>();
  /** Pages in the tree, counted as it changes (a pass over 200,000 paths took 150 ms at the end). */
  private pages = 0;
  private ops: Op[] = [];
  /** Where a flush that let the event loop run goes on. */
  private next = 0;
  private current: OpenFile | undefined;
  private stopped = false;
  private readonly sink: TreeSink;

  constructor(sink: TreeSink) {
    this.sink = sink;
  }

  dir(path: string): void {
    this.ops.push({ op: 'dir', path });
  }
  file(path: string): void {
    this.ops.push({ op: 'file', path });
  }
  data(chunk: Buffer): void {
    this.ops.push({ op: 'data', chunk });
  }
  end(): void {
    this.ops.push({ op: 'end' });
  }
  symlink(path: string, target: string): void {
    this.ops.push({ op: 'symlink', path, target });
  }
  link(path: string, target: string): void {
    this.ops.push({ op: 'link', path, target });
  }

  /** Writes what was queued, in order, in slices of the event loop; after `stop()`, nothing. */
  flush(): Promise<void> | undefined {
    const started = performance.now();
    const ops = this.ops;
    while (this.next < ops.length && !this.stopped) {
      const op = ops[this.next++] as Op;
      if (op.op === 'data') {
        // Consecutive chunks of one file go to the sink in one call.
        const chunks = [op.chunk];
        while (ops[this.next]?.op === 'data') chunks.push((ops[this.next++] as { chunk: Buffer }).chunk);
        this.write(chunks);
      } else {
        this.apply(op);
      }
      if (this.next < ops.length && performance.now() - started > SLICE_MS) {
        return new Promise((resolve) => setImmediate(resolve)).then(() => this.flush());
      }
    }
    this.ops = [];
    this.next = 0;
    return undefined;
  }

  /** Writes nothing more (after a refusal or a failure) and closes a half-written file. */
  stop(): void {
    this.stopped = true;
    this.ops = [];
    this.next = 0;
    const file = this.current;
    this.current = undefined;
    if (file) {
      try {
        this.sink.close(file.handle);
      } catch {
        // Already failing: the staging directory is removed next.
      }
    }
  }

  /** Files and symlinks written, their bytes, and the content version. */
  async summary(): Promise<ContentSummary> {
    let bytes = 0;
    let files = 0;
    for (const node of this.tree.values()) {
      if (node.kind === 'dir') continue;
      if (node.kind === 'file') bytes += node.size;
      files += 1;
    }
    return { version: await versionOf(this.tree), files, bytes };
  }

  /** The site's pages and root index, as a walk of what was written would find them. */
  site(): SiteSummary {
    return { pages: this.pages, hasIndex: this.tree.get('index.html')?.kind === 'file' };
  }

  private apply(op: Exclude<Op, { op: 'data' }>): void {
    switch (op.op) {
      case 'dir':
        if (op.path === '' || this.tree.get(op.path)?.kind === 'dir') return;
        this.prepare(op.path);
        this.makeDir(op.path);
        return;
      case 'file': {
        this.prepare(op.path);
        this.current = { path: op.path, handle: this.sink.file(op.path), hash: undefined, size: 0 };
        return;
      }
      case 'end': {
        const file = this.current;
        if (!file) return;
        this.current = undefined;
        this.sink.close(file.handle);
        this.put(
          file.path,
          file.hash ? { kind: 'file', digest: file.hash.digest('hex'), size: file.size } : EMPTY_FILE,
        );
        return;
      }
      case 'symlink':
        this.prepare(op.path);
        this.sink.symlink(op.path, op.target);
        this.put(op.path, {
          kind: 'symlink',
          digest: createHash('sha256').update(op.target).digest('hex'),
        });
        return;
      case 'link': {
        this.prepare(op.path);
        this.sink.link(op.path, op.target);
        // The policy admits links to files extracted before only.
        const target = this.tree.get(op.target);
        if (target) this.put(op.path, target);
        return;
      }
    }
  }

  private write(chunks: Buffer[]): void {
    const file = this.current;
    if (!file) return;
    let length = 0;
    file.hash ??= createHash('sha256');
    for (const chunk of chunks) {
      file.hash.update(chunk);
      length += chunk.length;
    }
    file.size += length;
    this.sink.write(file.handle, chunks, length);
  }

  /** Makes room for a new entry at `path`: parents exist as directories, nothing is at `path`. */
  private prepare(path: string): void {
    this.ensureParent(path);
    const existing = this.tree.get(path);
    if (!existing) return;
    // A later entry replaces an earlier one, as tar does; a hardlinked file keeps its other name.
    this.sink.remove(path, existing.kind === 'dir');
    if (existing.kind === 'dir') {
      const prefix = `${path}/`;
      for (const key of this.tree.keys()) if (key.startsWith(prefix)) this.drop(key);
    }
    this.drop(path);
  }

  /** Records what was written at `path` (cleared before by `prepare`). */
  private put(path: string, node: Node): void {
    this.tree.set(path, node);
    if (node.kind === 'file' && isPage(path)) this.pages += 1;
  }

  private drop(path: string): void {
    if (this.tree.get(path)?.kind === 'file' && isPage(path)) this.pages -= 1;
    this.tree.delete(path);
  }

  private ensureParent(path: string): void {
    const slash = path.lastIndexOf('/');
    if (slash === -1) return;
    const parent = path.slice(0, slash);
    const node = this.tree.get(parent);
    if (node?.kind === 'dir') return;
    if (node) {
      throw new BundleError(
        'Corrupt',
        `archive path ${path} needs a directory where the archive put a ${node.kind}: ${parent}`,
      );
    }
    this.ensureParent(parent);
    this.makeDir(parent);
  }

  private makeDir(path: string): void {
    this.sink.dir(path);
    this.put(path, DIR);
  }
}
