// The operator's bundle cache: each export job's bundle is downloaded and verified once per
// operator, however many releases publish it (a shared export, a renewed link). It keeps what the
// verification found, not the archive: nothing reads an archive again (the site chart's pods
// download their own), so a bundle streams through the verification without touching the disk.
// One small file per archive digest (`<sha256>.json`), at most `maxEntries`, the least recently
// used going first; never a link (links are credentials). Survives a restart when the work
// directory does.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { fetchBundle } from './fetch.ts';
import type { BundleLimits } from './limits.ts';
import type { LinkDestinations } from './link-destination.ts';
import type { SiteSummary } from './site-check.ts';

/** What a verified bundle is known to be, without downloading it again. */
export interface CachedBundle {
  /** Hex sha256 of the archive: the entry's name. */
  sha256: string;
  sizeBytes: number;
  /** Content version, `sha256-<hex>`. */
  version: string;
  files: number;
  site: SiteSummary;
}

interface Meta extends CachedBundle {
  /** Digests of the (account, job) pairs whose bundle this is. */
  sources: string[];
}

export interface BundleCacheOptions {
  dir: string;
  /** Most verification results kept; 0 keeps none (each job is still fetched once at a time). */
  maxEntries: number;
  limits?: Partial<BundleLimits>;
  logger?: Logger;
  /** Bytes of each archive actually downloaded (not those answered from the cache). */
  onDownloaded?: (bytes: number) => void;
}

interface CacheFetch {
  url: string;
  expectedSize?: number;
  renewUrl?: () => Promise<string>;
  signal?: AbortSignal;
  deadlineMs?: number;
  /** Where the platform's link may lead (link-destination.ts); absent: anywhere. */
  destinations?: LinkDestinations;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** The cache's folder in the operator's work directory. */
export const BUNDLE_CACHE_DIR = 'bundle-cache';
/**
 * More than the releases of a large installation, so a renewed link never downloads its bundle
 * again: an entry is a few hundred bytes on disk and in memory.
 */
export const DEFAULT_BUNDLE_CACHE_ENTRIES = 10_000;
/**
 * The most recent jobs an entry answers for. A site whose content does not change gives the same
 * bytes at every interval's export: without a bound its entry (and the look-up by job) would grow
 * by one job each time, for good. Only recent jobs are asked for again (a renewed link).
 */
const SOURCES_PER_ENTRY = 16;

/** One job of one account, as recorded on disk: a digest, so nothing there names either. */
export function bundleSource(identity: string, jobId: string): string {
  return createHash('sha256').update(`${identity}\u0000${jobId}`).digest('hex');
}

export class BundleCache {
  private readonly o: BundleCacheOptions;
  /** By archive digest, least recently used first (a use moves an entry to the end). */
  private readonly entries = new Map<string, Meta>();
  private readonly bySource = new Map<string, string>();
  private readonly fetching = new Map<string, Running>();

  private constructor(options: BundleCacheOptions) {
    this.o = options;
  }

  /**
   * Opens (creates) the cache directory. Anything but an entry is removed: a temporary file a
   * killed process left, or an archive an earlier version kept beside its entry.
   */
  static async open(options: BundleCacheOptions): Promise<BundleCache> {
    const cache = new BundleCache(options);
    await mkdir(options.dir, { recursive: true });
    let removed = 0;
    const found: { meta: Meta; usedAt: number }[] = [];
    for (const name of await readdir(options.dir)) {
      const sha = name.slice(0, 64);
      if (!SHA256.test(sha) || name !== `${sha}.json`) {
        await rm(join(options.dir, name), { recursive: true, force: true });
        removed++;
        continue;
      }
      try {
        const meta = JSON.parse(await readFile(join(options.dir, name), 'utf8')) as Meta;
        const { mtimeMs } = await stat(join(options.dir, name));
        if (meta.sha256 !== sha || !Array.isArray(meta.sources)) throw new Error('not an entry');
        found.push({ meta, usedAt: mtimeMs });
      } catch {
        await cache.drop(sha);
      }
    }
    for (const { meta } of found.sort((a, b) => a.usedAt - b.usedAt)) cache.add(meta);
    if (removed)
      options.logger?.info({ dir: options.dir, removed }, 'bundle cache: removed files other than entries');
    await cache.evict();
    return cache;
  }

  /** The verified bundle of `source` (see bundleSource): from the cache, or downloaded once however many ask. */
  async fetch(source: string, download: CacheFetch): Promise<CachedBundle> {
    const sha = this.bySource.get(source);
    const hit = sha === undefined ? undefined : this.entries.get(sha);
    if (hit) {
      this.add(hit);
      // The file's time carries the use across a restart; failing to set it changes nothing else.
      await utimes(join(this.o.dir, `${hit.sha256}.json`), new Date(), new Date()).catch(() => {});
      return strip(hit);
    }
    let running = this.fetching.get(source);
    if (!running) {
      const controller = new AbortController();
      const r: Running = {
        controller,
        waiters: 0,
        promise: this.download(source, { ...download, signal: controller.signal }).finally(() =>
          this.fetching.delete(source),
        ),
      };
      // Settled by whoever waits; this only keeps an unobserved failure from surfacing.
      r.promise.catch(() => {});
      this.fetching.set(source, r);
      running = r;
    }
    return waitFor(running, download.signal);
  }

  private async download(source: string, d: CacheFetch): Promise<CachedBundle> {
    const fetched = await fetchBundle({
      url: d.url,
      // Verified as it streams by, nothing extracted or written: the files are the site chart's to write.
      ...(d.expectedSize === undefined ? {} : { expectedSize: d.expectedSize }),
      ...(d.renewUrl ? { renewUrl: d.renewUrl } : {}),
      ...(d.signal ? { signal: d.signal } : {}),
      ...(this.o.logger ? { logger: this.o.logger } : {}),
      ...(this.o.limits ? { limits: this.o.limits } : {}),
      download: {
        ...(d.deadlineMs ? { deadlineMs: d.deadlineMs } : {}),
        ...(d.destinations ? { destinations: d.destinations } : {}),
      },
    });
    this.o.onDownloaded?.(fetched.sizeBytes);
    const existing = this.entries.get(fetched.sha256);
    const meta: Meta = {
      sha256: fetched.sha256,
      sizeBytes: fetched.sizeBytes,
      version: fetched.version,
      files: fetched.files,
      site: fetched.site,
      sources: [...new Set([...(existing?.sources ?? []), source])].slice(-SOURCES_PER_ENTRY),
    };
    if (this.o.maxEntries > 0) {
      const tmp = join(this.o.dir, `.meta-${randomBytes(4).toString('hex')}`);
      await writeFile(tmp, `${JSON.stringify(meta)}\n`);
      await rename(tmp, join(this.o.dir, `${meta.sha256}.json`));
      this.add(meta);
      await this.evict();
    }
    return strip(meta);
  }

  /** Adds or replaces an entry as the most recently used. */
  private add(meta: Meta): void {
    for (const s of this.entries.get(meta.sha256)?.sources ?? []) {
      if (!meta.sources.includes(s) && this.bySource.get(s) === meta.sha256) this.bySource.delete(s);
    }
    this.entries.delete(meta.sha256);
    this.entries.set(meta.sha256, meta);
    for (const s of meta.sources) this.bySource.set(s, meta.sha256);
  }

  private async drop(sha: string): Promise<void> {
    const e = this.entries.get(sha);
    this.entries.delete(sha);
    for (const s of e?.sources ?? []) if (this.bySource.get(s) === sha) this.bySource.delete(s);
    await rm(join(this.o.dir, `${sha}.json`), { force: true });
  }

  /** Least recently used first, until the entries fit (the one just added is the most recent). */
  private async evict(): Promise<void> {
    for (const sha of this.entries.keys()) {
      if (this.entries.size <= this.o.maxEntries) break;
      await this.drop(sha);
      this.o.logger?.debug({ sha256: sha }, 'bundle cache: evicted');
    }
  }
}

/** One download for every release waiting on the same job; aborted only once none of them waits. */
interface Running {
  promise: Promise<CachedBundle>;
  controller: AbortController;
  waiters: number;
}

function waitFor(r: Running, signal: AbortSignal | undefined): Promise<CachedBundle> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  r.waiters++;
  if (!signal) return r.promise;
  return new Promise<CachedBundle>((resolve, reject) => {
    const onAbort = () => {
      if (--r.waiters === 0) r.controller.abort(signal.reason);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    r.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function strip(meta: Meta): CachedBundle {
  const { sources: _, ...rest } = meta;
  return rest;
}
