// The site layer built straight from a bundle archive's entries as they stream in, without
// extracting the site to disk and reading it back: the bytes are exactly those `siteLayer` gives
// for the extracted site (same order, same headers), so the digest does not depend on the path
// taken. That works when the archive lists files and links in the layer's order (sorted paths);
// directories may come anywhere before the first entry sorting after them (e.g. all of them
// first, as the simulator writes bundles). An entry sorting before one already written, a
// replaced path or a hard link sets `unordered` and stops the parse: the caller extracts instead.
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Download } from '../bundle/download.ts';
import type { EntryWriter } from '../bundle/entry-writer.ts';
import { unpackWith } from '../bundle/extract.ts';
import type { BundleLimits } from '../bundle/limits.ts';
import { type SiteSummary, siteSummaryOf } from '../bundle/site-check.ts';
import { type TreeEntry, versionOf } from '../bundle/version.ts';
import { TAR_END_BYTES, type TarEntry, tarHeaders, tarPadding } from '../tar/writer.ts';
import type { StagedUpload } from './content.ts';
import { type SiteMetadata, siteImage } from './image.ts';
import type { PackagedSite } from './publish.ts';
import type { RegistryClient } from './registry.ts';

/** What the stream held, known once it has ended. */
interface StreamedLayer {
  digest: string;
  size: number;
  /** Regular files in the layer. */
  files: number;
  /** Bytes of the regular files. */
  contentBytes: number;
  /** Content version of the site, as the extraction computes it. */
  version: string;
  site: SiteSummary;
}

// Layer bytes waiting for the upload before the parser is held back.
const OUTPUT_BUFFER = 512 * 1024;
// Larger than the extraction's: nothing waits on a disk here, and the per-chunk costs (zlib
// calls, parser and socket writes) took about 12% more CPU time with 64 KiB.
const INFLATE_CHUNK = 256 * 1024;
// File data below this size joins the headers around it in one chunk instead of going on alone.
const SMALL_DATA = 16 * 1024;

/** Thrown by `flush` once the entries left the layer's order; the caller checks `unordered`. */
class Unordered extends Error {
  override readonly name = 'Unordered';
}

export class LayerWriter implements EntryWriter {
  /** The layer's bytes, produced at the pace they are read. */
  readonly output: Readable;
  /** Set when the archive's entries cannot give the layer's order without buffering the site. */
  unordered = false;
  private readonly hash = createHash('sha256');
  private size = 0;
  /** Files and symlinks with their content digests (what the content version covers). */
  private readonly tree = new Map<string, TreeEntry>();
  /** Directories named or implied so far, written or not. */
  private readonly dirs = new Set<string>();
  /** Directories not written yet, sorted: each goes out just before the first path sorting after it. */
  private pending: string[] = [];
  /** The last path written: every later one must sort after it. */
  private last: string | undefined;
  private current: { path: string; size: number; hash: Hash } | undefined;
  private batch: Buffer[] = [];
  private batched = 0;
  private files = 0;
  private contentBytes = 0;
  private resume: (() => void) | undefined;

  constructor() {
    this.output = new Readable({
      highWaterMark: OUTPUT_BUFFER,
      read: () => this.wake(),
    });
    // An upload that stopped reading (it failed) lets the parse go on to its own end.
    this.output.on('close', () => this.wake());
  }

  dir(path: string): void {
    if (!this.unordered && path !== '') this.known(path);
  }

  file(path: string, size: number): void {
    if (!this.enter(path)) return;
    this.add({ path, kind: 'file', size });
    this.current = { path, size, hash: createHash('sha256') };
  }

  data(chunk: Buffer): void {
    const file = this.current;
    if (this.unordered || !file) return;
    file.hash.update(chunk);
    if (chunk.length < SMALL_DATA) this.add(chunk);
    else {
      this.send();
      this.push(chunk);
    }
  }

  end(): void {
    const file = this.current;
    this.current = undefined;
    if (this.unordered || !file) return;
    this.add(Buffer.alloc(tarPadding(file.size)));
    this.tree.set(file.path, { kind: 'file', digest: file.hash.digest('hex') });
    this.files += 1;
    this.contentBytes += file.size;
  }

  symlink(path: string, target: string): void {
    if (!this.enter(path)) return;
    this.add({ path, kind: 'symlink', size: 0, target });
    this.tree.set(path, { kind: 'symlink', digest: createHash('sha256').update(target).digest('hex') });
  }

  link(_path: string, _target: string): void {
    // In the layer a hard link is a second copy of its target's bytes, which have gone by.
    this.unordered = true;
  }

  flush(): void | Promise<void> {
    if (this.unordered) throw new Unordered('bundle entries are not in the layer order');
    this.send();
    if (this.output.destroyed || this.output.readableLength < OUTPUT_BUFFER) return;
    return new Promise((resolve) => {
      this.resume = resolve;
    });
  }

  stop(): void {
    this.wake();
  }

  /** Writes the directories still pending and the end of the archive; the summary of the layer. */
  async finish(): Promise<StreamedLayer> {
    for (const dir of this.pending) this.add({ path: dir, kind: 'dir', size: 0 });
    this.pending = [];
    this.add(Buffer.alloc(TAR_END_BYTES));
    this.send();
    this.output.push(null);
    return {
      digest: `sha256:${this.hash.digest('hex')}`,
      size: this.size,
      files: this.files,
      contentBytes: this.contentBytes,
      version: await versionOf(this.tree),
      site: siteSummaryOf([...this.tree].filter(([, entry]) => entry.kind === 'file').map(([path]) => path)),
    };
  }

  /** Lets a parse waiting for the upload to read go on (it read, or it is gone). */
  private wake(): void {
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }

  /** Makes way for a file or symlink at `path`: false when it cannot be written in order. */
  private enter(path: string): boolean {
    if (this.unordered) return false;
    const slash = path.lastIndexOf('/');
    if (slash !== -1) this.known(path.slice(0, slash));
    if ((this.last !== undefined && path <= this.last) || this.dirs.has(path)) this.unordered = true;
    if (this.unordered) return false;
    while (this.pending.length > 0 && (this.pending[0] as string) < path) {
      this.add({ path: this.pending.shift() as string, kind: 'dir', size: 0 });
    }
    this.last = path;
    return true;
  }

  /** Records a directory (and its parents), to be written when its turn in the order comes. */
  private known(dir: string): void {
    if (this.dirs.has(dir)) return;
    const slash = dir.lastIndexOf('/');
    if (slash !== -1) this.known(dir.slice(0, slash));
    // Written already as a file or link, or due before what was written: no longer in order.
    if (this.tree.has(dir) || (this.last !== undefined && dir <= this.last)) {
      this.unordered = true;
      return;
    }
    this.dirs.add(dir);
    let at = this.pending.length;
    while (at > 0 && (this.pending[at - 1] as string) > dir) at -= 1;
    this.pending.splice(at, 0, dir);
  }

  /** Queues an entry's headers or a small piece of bytes, to go out with its neighbours. */
  private add(item: TarEntry | Buffer): void {
    for (const block of Buffer.isBuffer(item) ? [item] : tarHeaders(item)) {
      if (block.length === 0) continue;
      this.batch.push(block);
      this.batched += block.length;
    }
  }

  private send(): void {
    if (this.batched === 0) return;
    const chunk =
      this.batch.length === 1 ? (this.batch[0] as Buffer) : Buffer.concat(this.batch, this.batched);
    this.batch = [];
    this.batched = 0;
    this.push(chunk);
  }

  private push(chunk: Buffer): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    this.output.push(chunk);
  }
}

interface StageBundleOptions {
  /** The bundle archive as it downloads (`openDownload`; its digest is not needed). */
  download: Download<string | undefined>;
  client: RegistryClient;
  repository: string;
  limits: BundleLimits;
  meta: Omit<SiteMetadata, 'version' | 'pages'>;
  /** The publish gate: throwing drops the upload. */
  gate?: (site: SiteSummary) => void | Promise<void>;
}

/** A packaged site whose layer sits in an open upload, committed when the image is pushed. */
export interface StagedSite extends PackagedSite {
  site: SiteSummary;
  /** Drops the upload unless the push committed it (a version the repository had already). */
  release(): Promise<void>;
}

/**
 * Downloads, verifies and packages a bundle in one pass while the layer goes up to `repository`:
 * each byte is read once and the upload runs alongside the download. Nothing is committed here:
 * the layer waits in the registry's upload under no digest until the image is pushed, which
 * happens only after the download's checks (size; gzip's CRC and the tar structure as parsed) and
 * the gate passed. Undefined when
 * the archive's entries are not in the layer's order (the upload is dropped; extract instead).
 */
export async function stageBundleImage(options: StageBundleOptions): Promise<StagedSite | undefined> {
  const { download, client } = options;
  const writer = new LayerWriter();
  // The first failure is the one reported: the other side then fails because it was stopped.
  let failure: { error: unknown } | undefined;
  const parsing = unpackWith(download.body, writer, options.limits, { inflateChunk: INFLATE_CHUNK }).then(
    () => writer.finish(),
    (error: unknown) => {
      failure ??= { error };
      writer.output.destroy();
      return undefined;
    },
  );
  const uploading = client.stageBlob(options.repository, writer.output).catch((error: unknown) => {
    failure ??= { error };
    download.body.destroy();
    return undefined;
  });
  const [layer, staged] = await Promise.all([parsing, uploading]);
  const release = async () => staged?.cancel();
  if (writer.unordered) {
    await release();
    return undefined;
  }
  try {
    if (failure) throw failure.error;
    if (!layer || !staged) throw new Error('layer upload ended without a result');
    await download.done;
    await options.gate?.(layer.site);
    const image = siteImage(
      {
        digest: layer.digest,
        size: layer.size,
        files: layer.files,
        contentBytes: layer.contentBytes,
        ...stagedSource(staged),
      },
      { ...options.meta, version: layer.version, pages: layer.site.pages },
    );
    return {
      image,
      version: layer.version,
      pages: layer.site.pages,
      files: layer.files,
      site: layer.site,
      release,
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/** The blob side of a staged layer: its bytes have gone, so `open` is never called. */
function stagedSource(staged: StagedUpload): { staged: StagedUpload; open: () => never } {
  return {
    staged,
    open: () => {
      throw new Error('a staged layer is committed, not read again');
    },
  };
}
