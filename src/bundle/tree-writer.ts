import { createHash, type Hash } from 'node:crypto';
import { chmod, type FileHandle, link, mkdir, open, rm, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MARKER_CONTENT, MARKER_FILE } from './destination.ts';
import { BundleError } from './errors.ts';
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
  handle: FileHandle;
  hash: Hash;
  size: number;
}

/**
 * Writes archive entries (already admitted by the safety policy) under `root`, one at a time:
 * entries are queued while the tar parser runs, then `flush()` writes them, so the parser never
 * gets further ahead than the disk. Tracks what it wrote, with content digests computed on the
 * way, which gives the content version without reading the files back.
 */
export class TreeWriter {
  private readonly tree = new Map<string, Node>();
  private ops: Op[] = [];
  private current: OpenFile | undefined;
  private stopped = false;
  /** Whether the umask strips bits of FILE_MODE, so each file needs an explicit chmod. */
  private chmodFiles = true;
  private readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** Makes the root world-readable and writes the marker (which also probes the umask). */
  async init(): Promise<void> {
    await chmod(this.root, DIR_MODE);
    const handle = await open(join(this.root, MARKER_FILE), 'wx', FILE_MODE);
    try {
      await handle.writeFile(MARKER_CONTENT);
      this.chmodFiles = ((await handle.stat()).mode & 0o777) !== FILE_MODE;
      if (this.chmodFiles) await handle.chmod(FILE_MODE);
    } finally {
      await handle.close();
    }
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

  /** Writes what was queued, in order. */
  async flush(): Promise<void> {
    const ops = this.ops;
    this.ops = [];
    for (let i = 0; i < ops.length && !this.stopped; i++) {
      const op = ops[i] as Op;
      if (op.op === 'data') {
        // Consecutive chunks of one file go to the disk in one call.
        const chunks = [op.chunk];
        while (ops[i + 1]?.op === 'data') chunks.push((ops[++i] as { chunk: Buffer }).chunk);
        await this.write(chunks);
      } else {
        await this.apply(op);
      }
    }
  }

  /** Drops whatever is queued and writes nothing more (after a refusal or a failure). */
  stop(): void {
    this.stopped = true;
    this.ops = [];
  }

  /** Closes a file left half-written by a failure; call once nothing is flushing any more. */
  async close(): Promise<void> {
    const open = this.current;
    this.current = undefined;
    await open?.handle.close().catch(() => undefined);
  }

  /** Files and symlinks written, their bytes, and the content version. */
  summary(): ContentSummary {
    let bytes = 0;
    let files = 0;
    for (const node of this.tree.values()) {
      if (node.kind === 'dir') continue;
      if (node.kind === 'file') bytes += node.size;
      files += 1;
    }
    return { version: versionOf(this.tree), files, bytes };
  }

  private abs(path: string): string {
    return join(this.root, path);
  }

  private async apply(op: Exclude<Op, { op: 'data' }>): Promise<void> {
    switch (op.op) {
      case 'dir':
        if (op.path === '' || this.tree.get(op.path)?.kind === 'dir') return;
        await this.prepare(op.path);
        await this.makeDir(op.path);
        return;
      case 'file': {
        await this.prepare(op.path);
        // `wx`: the path was just cleared, so an existing one means something raced us; never follow it.
        const handle = await open(this.abs(op.path), 'wx', FILE_MODE);
        this.current = { path: op.path, handle, hash: createHash('sha256'), size: 0 };
        return;
      }
      case 'end': {
        const file = this.current;
        if (!file) return;
        this.current = undefined;
        try {
          if (this.chmodFiles) await file.handle.chmod(FILE_MODE);
        } finally {
          await file.handle.close();
        }
        this.tree.set(
          file.path,
          file.size === 0 ? EMPTY_FILE : { kind: 'file', digest: file.hash.digest('hex'), size: file.size },
        );
        return;
      }
      case 'symlink':
        await this.prepare(op.path);
        await symlink(op.target, this.abs(op.path));
        this.tree.set(op.path, {
          kind: 'symlink',
          digest: createHash('sha256').update(op.target).digest('hex'),
        });
        return;
      case 'link': {
        await this.prepare(op.path);
        await link(this.abs(op.target), this.abs(op.path));
        // The policy admits links to files extracted before only.
        const target = this.tree.get(op.target);
        if (target) this.tree.set(op.path, target);
        return;
      }
    }
  }

  private async write(chunks: Buffer[]): Promise<void> {
    const file = this.current;
    if (!file) return;
    for (const chunk of chunks) {
      file.hash.update(chunk);
      file.size += chunk.length;
    }
    if (chunks.length === 1) await file.handle.write(chunks[0] as Buffer);
    else await file.handle.writev(chunks);
  }

  /** Makes room for a new entry at `path`: parents exist as directories, nothing is at `path`. */
  private async prepare(path: string): Promise<void> {
    await this.ensureParent(path);
    const existing = this.tree.get(path);
    if (!existing) return;
    // A later entry replaces an earlier one, as tar does; a hardlinked file keeps its other name.
    if (existing.kind === 'dir') {
      await rm(this.abs(path), { recursive: true });
      const prefix = `${path}/`;
      for (const key of this.tree.keys()) if (key.startsWith(prefix)) this.tree.delete(key);
    } else {
      await unlink(this.abs(path));
    }
    this.tree.delete(path);
  }

  private async ensureParent(path: string): Promise<void> {
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
    await this.ensureParent(parent);
    await this.makeDir(parent);
  }

  private async makeDir(path: string): Promise<void> {
    const abs = this.abs(path);
    await mkdir(abs, { mode: DIR_MODE });
    // mkdir's mode is filtered by the umask.
    await chmod(abs, DIR_MODE);
    this.tree.set(path, DIR);
  }
}
