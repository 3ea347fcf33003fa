// Reads of single objects served from an informer's cache instead of a GET per reconcile, with this
// process's own writes laid over the cache until the watch delivers them (client-go's
// MutationCache): a reconcile right after our own status write never decides from the state before
// it. For informers that hold only metadata (Secrets), the objects read or written here are kept
// and served while the informer still shows the same resourceVersion. Whatever cannot be shown to
// be current is read from the API server.
import { type Informer, type KubeObject, withoutManagedFields } from './informer.ts';

/**
 * Orders two resourceVersions when both are integers (an etcd revision, as every API server
 * backed by etcd 3 gives them; client-go's integer MutationCache relies on the same). Undefined
 * when either is not: they are opaque then, and only a read from the API server is known current.
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The informer whose cache serves the reads. */
export type CacheSource = Pick<Informer<KubeObject>, 'get' | 'onChange' | 'hasSynced'>;

interface CachedReaderOptions<T extends KubeObject> {
  informer: CacheSource;
  /** The informer holds whole objects (else metadata only: contents come from reads and writes here). */
  full: boolean;
  /** A read from the API server; rejects with a 404 KubeApiError when the object does not exist. */
  fetch(namespace: string, name: string, signal?: AbortSignal): Promise<T>;
}

export class CachedReader<T extends KubeObject> {
  private readonly o: CachedReaderOptions<T>;
  /** Objects this process wrote or read, by `namespace/name`, until the informer shows them or newer. */
  private readonly known = new Map<string, T>();

  constructor(options: CachedReaderOptions<T>) {
    this.o = options;
    options.informer.onChange((type, obj) => {
      const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
      const mine = this.known.get(key);
      if (!mine) return;
      const order = compareResourceVersions(obj.metadata.resourceVersion, mine.metadata.resourceVersion);
      // Deleted, changed by someone after us, or (whole objects) caught up with our write.
      if (type === 'DELETED' || order === undefined || order > 0 || (this.o.full && order === 0))
        this.known.delete(key);
    });
  }

  /** The object as current as the cache can show it; read from the API server when it cannot. */
  async get(namespace: string, name: string, signal?: AbortSignal): Promise<T> {
    const cached = this.cached(namespace, name);
    if (cached !== undefined) return cached;
    const read = await this.o.fetch(namespace, name, signal);
    if (!this.o.full) this.remember(read);
    return read;
  }

  /**
   * Like `get`, but `undefined` when the synced cache has never seen the object (nor has this
   * process written it): for a create that fails anyway if it exists meanwhile.
   */
  async getIfCached(namespace: string, name: string, signal?: AbortSignal): Promise<T | undefined> {
    if (
      this.o.informer.hasSynced() &&
      !this.o.informer.get(namespace, name) &&
      !this.known.has(`${namespace}/${name}`)
    )
      return undefined;
    return this.get(namespace, name, signal);
  }

  /** An object as this process just wrote or read it (the API server's answer). */
  remember(obj: T): void {
    const { namespace, name, resourceVersion } = obj.metadata;
    if (!resourceVersion) return;
    const key = `${namespace ?? ''}/${name}`;
    const seen = this.o.informer.get(namespace, name);
    const order = seen ? (compareResourceVersions(seen.metadata.resourceVersion, resourceVersion) ?? 1) : -1;
    // The informer has something newer already (keeping ours would only go stale) or, holding whole
    // objects, ours (the watch was quicker than the answer): nothing would ever drop a copy kept now.
    if (order > 0 || (this.o.full && order === 0)) {
      this.known.delete(key);
      return;
    }
    const prev = this.known.get(key);
    if (prev && (compareResourceVersions(prev.metadata.resourceVersion, resourceVersion) ?? -1) > 0) return;
    this.known.set(key, withoutManagedFields(obj));
  }

  /** How many written or read objects are held beside the informer's cache. */
  size(): number {
    return this.known.size;
  }

  private cached(namespace: string, name: string): T | undefined {
    if (!this.o.informer.hasSynced()) return undefined;
    const key = `${namespace}/${name}`;
    const seen = this.o.informer.get(namespace, name);
    // Opaque resourceVersions: our own writes cannot be ordered against the watch's, so only a
    // read from the API server is known to include them.
    if (seen && compareResourceVersions(seen.metadata.resourceVersion, '0') === undefined) return undefined;
    const mine = this.known.get(key);
    if (mine) {
      const order = seen
        ? compareResourceVersions(seen.metadata.resourceVersion, mine.metadata.resourceVersion)
        : -1;
      if (order === undefined) return undefined;
      if (order <= 0) return mine;
    }
    return this.o.full && seen ? (seen as T) : undefined;
  }
}
