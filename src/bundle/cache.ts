// The operator's bundle cache: each export job's bundle is downloaded and verified once per
// operator, however many releases publish it. Content-addressed (`<sha256>.tar.gz` and its
// verification result `<sha256>.json`), bounded in size: the least recently used archives go first.
// Never holds a link (links are credentials). Survives a restart when the work directory does.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { fetchBundle } from './fetch.ts';
import type { BundleLimits } from './limits.ts';
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

interface Entry {
  meta: Meta;
  usedAt: number;
}

export interface BundleCacheOptions {
  dir: string;
  /** Most bytes of archives kept; 0 keeps none (each job is still fetched once at a time). */
  maxBytes: number;
  limits?: Partial<BundleLimits>;
  logger?: Logger;
  /** Bytes of each archive actually downloaded (not those answered from the cache). */
  onDownloaded?: (bytes: number) => void;
  now?: () => number;
}

export interface CacheFetch {
  url: string;
  expectedSize?: number;
  renewUrl?: () => Promise<string>;
  signal?: AbortSignal;
  deadlineMs?: number;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** The cache's folder in the operator's work directory. */
export const BUNDLE_CACHE_DIR = 'bundle-cache';
/** A few typical sites' bundles; the work directory must hold this beside one download being verified. */
export const DEFAULT_BUNDLE_CACHE_BYTES = 512 * 1024 ** 2;

/** One job of one account, as recorded on disk: a digest, so nothing there names either. */
export function bundleSource(identity: string, jobId: string): string {
  return createHash('sha256').update(`${identity}\u0000${jobId}`).digest('hex');
}

export class BundleCache {
  private readonly o: BundleCacheOptions;
  private readonly entries = new Map<string, Entry>();
  private readonly bySource = new Map<string, string>();
  private readonly fetching = new Map<string, Running>();
  private readonly now: () => number;
  /** The entries' sizes summed as they come and go: a sum over all of them per download is quadratic. */
  private held = 0;

  private constructor(options: BundleCacheOptions) {
    this.o = options;
    this.now = options.now ?? Date.now;
  }

  /** Opens (creates) the cache directory: unfinished entries a killed process left are removed. */
  static async open(options: BundleCacheOptions): Promise<BundleCache> {
    const cache = new BundleCache(options);
    await mkdir(options.dir, { recursive: true });
    const names = await readdir(options.dir);
    const present = new Set(names);
    let removed = 0;
    for (const name of names) {
      const sha = name.slice(0, 64);
      const complete =
        SHA256.test(sha) &&
        ((name === `${sha}.json` && present.has(`${sha}.tar.gz`)) ||
          (name === `${sha}.tar.gz` && present.has(`${sha}.json`)));
      if (!complete) {
        await rm(join(options.dir, name), { recursive: true, force: true });
        removed++;
        continue;
      }
      if (!name.endsWith('.json')) continue;
      try {
        const meta = JSON.parse(await readFile(join(options.dir, name), 'utf8')) as Meta;
        const { mtimeMs } = await stat(join(options.dir, name));
        if (meta.sha256 !== sha || !Array.isArray(meta.sources)) throw new Error('not an entry');
        cache.add(meta, mtimeMs);
      } catch {
        await cache.drop(sha);
      }
    }
    if (removed) options.logger?.info({ dir: options.dir, removed }, 'removed unfinished downloads');
    await cache.evict();
    return cache;
  }

  /** Bytes of archives held. */
  get sizeBytes(): number {
    return this.held;
  }

  /** The verified bundle of `source` (see bundleSource): from the cache, or downloaded once however many ask. */
  async fetch(source: string, download: CacheFetch): Promise<CachedBundle> {
    const sha = this.bySource.get(source);
    const hit = sha === undefined ? undefined : this.entries.get(sha);
    if (hit) {
      hit.usedAt = this.now();
      // The file's time carries the use across a restart; failing to set it changes nothing else.
      await utimes(join(this.o.dir, `${hit.meta.sha256}.json`), new Date(), new Date()).catch(() => {});
      return strip(hit.meta);
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
    const suffix = randomBytes(4).toString('hex');
    const incoming = join(this.o.dir, `.incoming-${suffix}.tar.gz`);
    // An archive larger than the whole cache is verified but not kept.
    const keep = this.o.maxBytes > 0 && (d.expectedSize === undefined || d.expectedSize <= this.o.maxBytes);
    try {
      const fetched = await fetchBundle({
        url: d.url,
        // Verified as it streams by, nothing extracted: the files are the site chart's to write.
        ...(keep ? { archiveCopy: incoming } : {}),
        ...(d.expectedSize === undefined ? {} : { expectedSize: d.expectedSize }),
        ...(d.renewUrl ? { renewUrl: d.renewUrl } : {}),
        ...(d.signal ? { signal: d.signal } : {}),
        ...(this.o.logger ? { logger: this.o.logger } : {}),
        ...(this.o.limits ? { limits: this.o.limits } : {}),
        ...(d.deadlineMs ? { download: { deadlineMs: d.deadlineMs } } : {}),
      });
      this.o.onDownloaded?.(fetched.sizeBytes);
      const existing = this.entries.get(fetched.sha256);
      const meta: Meta = {
        sha256: fetched.sha256,
        sizeBytes: fetched.sizeBytes,
        version: fetched.version,
        files: fetched.files,
        site: fetched.site,
        sources: [...new Set([...(existing?.meta.sources ?? []), source])],
      };
      if (keep && fetched.sizeBytes <= this.o.maxBytes) {
        if (!existing) await rename(incoming, join(this.o.dir, `${meta.sha256}.tar.gz`));
        const tmp = join(this.o.dir, `.meta-${suffix}`);
        await writeFile(tmp, `${JSON.stringify(meta)}\n`);
        await rename(tmp, join(this.o.dir, `${meta.sha256}.json`));
        this.add(meta, this.now());
        await this.evict(meta.sha256);
      }
      return strip(meta);
    } finally {
      await rm(incoming, { force: true });
    }
  }

  private add(meta: Meta, usedAt: number): void {
    this.held += meta.sizeBytes - (this.entries.get(meta.sha256)?.meta.sizeBytes ?? 0);
    this.entries.set(meta.sha256, { meta, usedAt });
    for (const s of meta.sources) this.bySource.set(s, meta.sha256);
  }

  private async drop(sha: string): Promise<void> {
    const e = this.entries.get(sha);
    this.held -= e?.meta.sizeBytes ?? 0;
    this.entries.delete(sha);
    for (const s of e?.meta.sources ?? []) if (this.bySource.get(s) === sha) this.bySource.delete(s);
    await Promise.all([`${sha}.json`, `${sha}.tar.gz`].map((n) => rm(join(this.o.dir, n), { force: true })));
  }

  /** Least recently used first, until the archives fit; `keep` (just added) goes last. */
  private async evict(keep?: string): Promise<void> {
    let total = this.sizeBytes;
    if (total <= this.o.maxBytes) return;
    const order = [...this.entries.values()].sort(
      (a, b) => Number(a.meta.sha256 === keep) - Number(b.meta.sha256 === keep) || a.usedAt - b.usedAt,
    );
    for (const e of order) {
      if (total <= this.o.maxBytes) break;
      total -= e.meta.sizeBytes;
      await this.drop(e.meta.sha256);
      this.o.logger?.debug({ sha256: e.meta.sha256, sizeBytes: e.meta.sizeBytes }, 'bundle cache: evicted');
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
