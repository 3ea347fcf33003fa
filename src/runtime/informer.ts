// List-watch with an in-memory cache (a reflector + store, as in client-go and kube-rs):
// paginated list, watch from the list's resourceVersion, re-list on 410 Gone, restart the watch
// with backoff on errors, a watchdog that re-lists when nothing (not even a BOOKMARK) arrived for
// too long, periodic resync, and synthetic deletes for objects that vanished across a re-list.
// One list-watch loop per namespace when a namespace list is given; they share the cache.
import type { Logger } from '../log.ts';
import { backoff, type LongTimer, setLongInterval, setLongTimeout, timeoutSignal, wait } from '../timers.ts';
import { isGone, type ObjectList, resourcePath, type WatchEvent } from './kube-client.ts';
import type { Metrics } from './metrics.ts';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    deletionTimestamp?: string;
    finalizers?: string[];
  };
}

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The part of `KubeClient` an informer needs (a fake in unit tests). */
export interface ListWatchClient {
  list<T>(
    path: string,
    query?: Record<string, string | number | undefined>,
    pageSize?: number,
    signal?: AbortSignal,
  ): Promise<ObjectList<T>>;
  watch<T>(
    path: string,
    query: Record<string, string | number | undefined>,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<T>>;
}

/** RESYNC re-delivers a cached object unchanged (`old` is the same object). */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';
type ChangeHandler<T> = (type: ChangeType, obj: T, old?: T) => void;

export interface InformerOptions<T extends KubeObject = KubeObject> {
  client: ListWatchClient;
  apiVersion: string;
  plural: string;
  /** Namespaces to watch; all namespaces when absent or empty. */
  namespaces?: string[];
  labelSelector?: string;
  fieldSelector?: string;
  pageSize?: number;
  /** Re-list when nothing arrived for this long. Default 5 min. */
  watchdogMs?: number;
  /** Server-side watch timeout; below the watchdog so a healthy stream ends and restarts first. */
  watchTimeoutSeconds?: number;
  /** Re-deliver every cached object this often; 0 disables. Default 10 min. */
  resyncMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  logger?: Logger;
  metrics?: Pick<Metrics, 'watchRestarts' | 'watchRelists'>;
  /**
   * What is cached of each listed or watched object (client-go's SetTransform), for a cache that
   * needs a few fields of many objects; it must keep name, namespace and resourceVersion. Default:
   * the object without managedFields.
   */
  transform?: (obj: KubeObject) => T;
}

interface InformerStats {
  lists: number;
  relists: number;
  watchRestarts: number;
  watchdogFires: number;
}

export const objectKey = (o: KubeObject): string =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;

class GoneError extends Error {}

/** The keys of the cached objects filed under one index value: one as is, more in a Set. */
type Bucket = string | Set<string>;

/**
 * Caches drop `metadata.managedFields` (controller-runtime's TransformStripManagedFields): often
 * the largest part of an object, and no controller reads it. The object is freshly parsed. The
 * metadata is copied without it rather than `delete`d from: a delete turns V8's object into a
 * hash table (about 450 bytes per cached object instead of about 100).
 */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata && 'managedFields' in obj.metadata) {
    const { managedFields: _, ...metadata } = obj.metadata as T['metadata'] & { managedFields?: unknown };
    obj.metadata = metadata;
  }
  return obj;
}

/**
 * Decides what a fresh list means for the cache: adds and modifications (by resourceVersion)
 * and objects that vanished meanwhile. Only cache entries `inScope` are compared.
 */
export function diffList<T extends KubeObject>(
  cache: ReadonlyMap<string, T>,
  items: readonly T[],
  inScope: (o: T) => boolean,
): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; obj: T; old?: T }[] {
  const out: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; obj: T; old?: T }[] = [];
  const seen = new Set<string>();
  for (const obj of items) {
    const key = objectKey(obj);
    seen.add(key);
    const old = cache.get(key);
    if (!old) out.push({ type: 'ADDED', obj });
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
      out.push({ type: 'MODIFIED', obj, old });
  }
  for (const [key, obj] of cache) if (inScope(obj) && !seen.has(key)) out.push({ type: 'DELETED', obj });
  return out;
}

/** `plural.group` (`plural` for the core group): how logs and metrics name a resource. */
export const resourceName = (apiVersion: string, plural: string): string =>
  apiVersion.includes('/') ? `${plural}.${apiVersion.split('/')[0]}` : plural;

export class Informer<T extends KubeObject> {
  readonly resource: string;
  private readonly opts: InformerOptions<T>;
  private readonly cache = new Map<string, T>();
  private readonly handlers: ChangeHandler<T>[] = [];
  private readonly synced = new Set<string | undefined>();
  private readonly scopes: (string | undefined)[];
  private readonly stopper = new AbortController();
  private readonly syncWaiters: (() => void)[] = [];
  private readonly counters: InformerStats = { lists: 0, relists: 0, watchRestarts: 0, watchdogFires: 0 };
  private loops: Promise<void>[] = [];
  private resyncTimer: LongTimer | undefined;
  /**
   * Index name -> (how an object is filed, value -> keys of the cached objects filed there). A
   * value most objects have to themselves (a domain, a values Secret) holds the one key as is: a
   * Set per cached object would cost about 150 bytes each.
   */
  private readonly indexes = new Map<string, { of: (obj: T) => string[]; buckets: Map<string, Bucket> }>();

  constructor(options: InformerOptions<T>) {
    this.opts = options;
    this.resource = resourceName(options.apiVersion, options.plural);
    this.scopes = options.namespaces?.length ? [...new Set(options.namespaces)] : [undefined];
  }

  onChange(handler: ChangeHandler<T>): void {
    this.handlers.push(handler);
  }

  /**
   * Files every cached object under the values `of` gives (client-go's Indexers), so finding the
   * objects that name something (a Secret, a label) takes no scan of the whole cache.
   */
  addIndex(name: string, of: (obj: T) => string[]): void {
    const buckets = new Map<string, Bucket>();
    this.indexes.set(name, { of, buckets });
    for (const [key, obj] of this.cache) this.file(buckets, of(obj), key);
  }

  /** The cached objects filed under `value` in index `name`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.indexes.get(name)?.buckets.get(value);
    if (keys === undefined) return [];
    return (typeof keys === 'string' ? [keys] : [...keys])
      .map((k) => this.cache.get(k))
      .filter((o): o is T => o !== undefined);
  }

  start(): void {
    if (this.loops.length) return;
    this.loops = this.scopes.map((ns) => this.runLoop(ns));
    const resync = this.opts.resyncMs ?? 600_000;
    if (resync > 0) {
      this.resyncTimer = setLongInterval(
        () => {
          for (const obj of this.cache.values()) this.emit('RESYNC', obj, obj);
        },
        resync,
        { unref: true },
      );
    }
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    this.resyncTimer?.clear();
    await Promise.all(this.loops);
    for (const w of this.syncWaiters.splice(0)) w();
  }

  /** True once every namespace's first list has been loaded into the cache. */
  hasSynced(): boolean {
    return this.synced.size === this.scopes.length;
  }

  /** Resolves once synced (or stopped). */
  waitForSync(): Promise<void> {
    if (this.hasSynced() || this.stopper.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  private store(key: string, obj: T): void {
    const old = this.cache.get(key);
    for (const { of, buckets } of this.indexes.values()) {
      if (old) this.unfile(buckets, of(old), key);
      this.file(buckets, of(obj), key);
    }
    this.cache.set(key, obj);
  }

  private unstore(key: string): void {
    const old = this.cache.get(key);
    if (!old) return;
    for (const { of, buckets } of this.indexes.values()) this.unfile(buckets, of(old), key);
    this.cache.delete(key);
  }

  private file(buckets: Map<string, Bucket>, values: string[], key: string): void {
    for (const v of values) {
      const keys = buckets.get(v);
      if (keys === undefined || keys === key) buckets.set(v, key);
      else if (typeof keys === 'string') buckets.set(v, new Set([keys, key]));
      else keys.add(key);
    }
  }

  private unfile(buckets: Map<string, Bucket>, values: string[], key: string): void {
    for (const v of values) {
      const keys = buckets.get(v);
      if (keys === key) buckets.delete(v);
      else if (typeof keys !== 'string' && keys?.delete(key) && keys.size === 0) buckets.delete(v);
    }
  }

  private shape(obj: KubeObject): T {
    return this.opts.transform ? this.opts.transform(obj) : withoutManagedFields(obj as T);
  }

  stats(): InformerStats {
    return { ...this.counters };
  }

  private emit(type: ChangeType, obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        h(type, obj, old);
      } catch (err) {
        this.opts.logger?.error({ err, resource: this.resource }, 'informer handler failed');
      }
    }
  }

  private count(what: 'relists' | 'watchRestarts'): void {
    this.counters[what]++;
    const metric = what === 'relists' ? this.opts.metrics?.watchRelists : this.opts.metrics?.watchRestarts;
    metric?.inc({ resource: this.resource });
  }

  private query(): Record<string, string | undefined> {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  private async runLoop(namespace: string | undefined): Promise<void> {
    const path = resourcePath(this.opts.apiVersion, this.opts.plural, namespace);
    const stop = this.stopper.signal;
    const base = this.opts.backoffBaseMs ?? 1_000;
    const max = this.opts.backoffMaxMs ?? 30_000;
    const log = this.opts.logger?.child({ resource: this.resource, namespace });
    let failures = 0;
    // Exponential in consecutive failures, ±20 % jitter so many informers do not retry in step.
    const nextDelay = () => backoff(failures++, { base, max, jitter: 0.2 });
    let resourceVersion: string | undefined;
    while (!stop.aborted) {
      try {
        if (resourceVersion === undefined) {
          resourceVersion = await this.relist(path, namespace);
          failures = 0;
        }
        const started = Date.now();
        const outcome = await this.watchOnce(path, resourceVersion, (rv) => {
          resourceVersion = rv;
          // Only a working connection (a list, an event) resets the backoff of repeated failures.
          failures = 0;
        });
        if (stop.aborted) break;
        this.count('watchRestarts');
        if (outcome === 'watchdog') {
          log?.warn('watch silent for too long; re-listing');
          resourceVersion = undefined;
        } else if (Date.now() - started < 1_000) {
          // A stream that closes at once (e.g. a server shutting down) must not hot-loop.
          await wait(nextDelay(), stop);
        }
      } catch (err) {
        if (stop.aborted) break;
        if (err instanceof GoneError || isGone(err)) {
          log?.info('resourceVersion expired (410); re-listing');
          resourceVersion = undefined;
          this.count('watchRestarts');
          continue;
        }
        const delay = nextDelay();
        this.count('watchRestarts');
        log?.warn({ err, delayMs: Math.round(delay) }, 'list/watch failed; retrying');
        await wait(delay, stop);
      }
    }
  }

  /** Lists everything in scope, reconciles the cache against it, returns the list's resourceVersion. */
  private async relist(path: string, namespace: string | undefined): Promise<string> {
    // The watchdog guards watches; a list that hangs counts as failed after the same time.
    const signal = AbortSignal.any([this.stopper.signal, timeoutSignal(this.opts.watchdogMs ?? 300_000)]);
    const list = await this.opts.client.list<T>(path, this.query(), this.opts.pageSize ?? 500, signal);
    if (this.stopper.signal.aborted) return list.metadata.resourceVersion;
    const inScope = (o: T) => namespace === undefined || o.metadata.namespace === namespace;
    const items = list.items.map((o) => this.shape(o));
    for (const change of diffList(this.cache, items, inScope)) {
      const key = objectKey(change.obj);
      if (change.type === 'DELETED') this.unstore(key);
      else this.store(key, change.obj);
      this.emit(change.type, change.obj, change.old);
    }
    this.counters.lists++;
    if (this.synced.has(namespace)) this.count('relists');
    else {
      this.synced.add(namespace);
      if (this.hasSynced()) for (const w of this.syncWaiters.splice(0)) w();
    }
    return list.metadata.resourceVersion;
  }

  /** One watch stream; returns how it ended. Throws on errors (GoneError for 410). */
  private async watchOnce(
    path: string,
    resourceVersion: string,
    seen: (rv: string) => void,
  ): Promise<'ended' | 'watchdog'> {
    const watchdogMs = this.opts.watchdogMs ?? 300_000;
    const timeoutSeconds =
      this.opts.watchTimeoutSeconds ?? Math.max(1, Math.floor((watchdogMs * 0.8) / 1000));
    const abort = new AbortController();
    const onStop = () => abort.abort();
    this.stopper.signal.addEventListener('abort', onStop, { once: true });
    let fired = false;
    let watchdog: LongTimer | undefined;
    const arm = () => {
      watchdog?.clear();
      watchdog = setLongTimeout(() => {
        fired = true;
        this.counters.watchdogFires++;
        abort.abort();
      }, watchdogMs);
    };
    arm();
    try {
      const stream = this.opts.client.watch<T | WatchStatus>(
        path,
        { ...this.query(), resourceVersion, timeoutSeconds },
        abort.signal,
      );
      for await (const event of stream) {
        arm();
        if (event.type === 'ERROR') {
          const status = event.object as WatchStatus;
          if (status.code === 410) throw new GoneError(status.message ?? 'resourceVersion expired');
          throw new Error(`watch error event: ${status.code ?? '?'} ${status.message ?? ''}`);
        }
        const { resourceVersion } = (event.object as T).metadata ?? {};
        if (resourceVersion) seen(resourceVersion);
        if (event.type !== 'BOOKMARK') this.apply(event.type, this.shape(event.object as T));
      }
      return fired ? 'watchdog' : 'ended';
    } catch (err) {
      if (fired) return 'watchdog';
      throw err;
    } finally {
      watchdog?.clear();
      this.stopper.signal.removeEventListener('abort', onStop);
    }
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void {
    const key = objectKey(obj);
    const old = this.cache.get(key);
    if (type === 'DELETED') {
      this.unstore(key);
      this.emit('DELETED', obj);
      return;
    }
    this.store(key, obj);
    this.emit(old ? 'MODIFIED' : 'ADDED', obj, old);
  }
}

interface WatchStatus {
  kind?: string;
  code?: number;
  message?: string;
  metadata?: undefined;
}
