// Workers that turn queued keys into reconciles (controller-runtime's controller): get a key,
// reconcile it, then forget its backoff and honour requeueAfter on success, or re-add it rate
// limited on error. Watch events only ever enqueue keys; the reconcile reads current state.
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../log.ts';
import { type LongTimer, setLongTimeout } from '../timers.ts';
import { type ChangeType, type Informer, type KubeObject, objectKey } from './informer.ts';
import type { Metrics } from './metrics.ts';
import { WorkQueue, type WorkQueueOptions } from './work-queue.ts';

export interface ReconcileResult {
  /** Reconcile this key again after this long (polling, link renewal). */
  requeueAfterMs?: number;
  /**
   * Try again with the work queue's exponential backoff (a transient failure with no delay of its
   * own); the error says why and is logged. Handled as a thrown error is.
   */
  backoff?: Error;
}

/**
 * `signal` aborts when the key's work is no longer wanted: the controller is stopped past its drain
 * deadline (e.g. leadership lost) or the key was cancelled (its object deleted).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: lets a reconcile with nothing to return type-check.
export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  /** Parallel reconciles (never two for one key). Default 1. */
  concurrency?: number;
  queue?: WorkQueueOptions;
  logger?: Logger;
  metrics?: Metrics;
}

export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  enqueue(key: string): void;
  enqueueAfter(key: string, ms: number): void;
  /** Aborts the key's reconcile in flight, if any (not requeued: whoever cancels enqueues what follows). */
  cancel(key: string): void;
  /**
   * Stops handing out keys and waits for in-flight reconciles; after `drainMs` (default 30 s)
   * their signal is aborted and it resolves without waiting further.
   */
  stop(drainMs?: number): Promise<void>;
}

export const toKey = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

/** `namespace/name` -> parts; a key without a slash is a cluster-scoped name. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export function runController(options: ControllerOptions): Controller {
  const { name, reconcile, metrics } = options;
  const queue = new WorkQueue(options.queue);
  const log = options.logger?.child({ controller: name });
  const aborter = new AbortController();
  const inFlight = new Map<string, AbortController>();
  metrics?.trackQueue(name, queue);

  async function processOne(key: string): Promise<void> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const cancel = new AbortController();
    inFlight.set(key, cancel);
    const signal = AbortSignal.any([aborter.signal, cancel.signal]);
    // A thrown error and a backoff asked for are one outcome: retried rate limited, and logged.
    const backOff = (err: unknown) => {
      metrics?.observeReconcile(name, 'error', seconds());
      if (signal.aborted) return;
      queue.addRateLimited(key);
      log?.error({ err, key, retries: queue.numRequeues(key) }, 'reconcile failed; retrying with backoff');
    };
    try {
      const result = await reconcile(key, signal);
      if (result?.backoff) return backOff(result.backoff);
      queue.forget(key);
      const after = result?.requeueAfterMs;
      if (after !== undefined && after >= 0) queue.addAfter(key, after);
      metrics?.observeReconcile(name, after !== undefined ? 'requeue' : 'success', seconds());
    } catch (err) {
      backOff(err);
    } finally {
      inFlight.delete(key);
      queue.done(key);
    }
  }

  async function worker(): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      await processOne(key);
    }
  }

  const workers = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => worker());

  return {
    name,
    queue,
    enqueue: (key) => queue.add(key),
    enqueueAfter: (key, ms) => queue.addAfter(key, ms),
    cancel: (key) => inFlight.get(key)?.abort(new Error(`reconcile of ${key} cancelled`)),
    async stop(drainMs = 30_000) {
      queue.shutDown();
      let timer: LongTimer | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setLongTimeout(() => {
          log?.warn({ drainMs }, 'reconciles still running at the drain deadline; aborting them');
          aborter.abort();
          resolve();
        }, drainMs);
      });
      await Promise.race([Promise.all(workers), deadline]);
      timer?.clear();
      metrics?.untrackQueue(name);
    },
  };
}

/** Maps a changed object to the keys of the primary objects to reconcile. */
export type KeyMapper<T> = (obj: T, type: ChangeType) => string[];

/** The object's own `namespace/name`. */
export const ownKey = <T extends KubeObject>(obj: T): string[] => [
  toKey(obj.metadata.namespace, obj.metadata.name),
];

/** Keys of the object's controller owner of `kind` (a Secret the operator wrote -> its release). */
export const ownerKeys =
  (kind: string, apiGroup?: string) =>
  <T extends KubeObject>(obj: T): string[] =>
    (obj.metadata.ownerReferences ?? [])
      .filter(
        (r) =>
          r.controller &&
          r.kind === kind &&
          (apiGroup === undefined || r.apiVersion.startsWith(`${apiGroup}/`)),
      )
      .map((r) => toKey(obj.metadata.namespace, r.name));

/**
 * Files an object under `namespace/<the name it refers to>`, for `referrerKeys` (e.g. a release
 * under the key Secret it reads).
 */
export const refIndex =
  <R extends KubeObject>(refName: (r: R) => string | undefined) =>
  (r: R): string[] => {
    const name = refName(r);
    return name === undefined ? [] : [toKey(r.metadata.namespace, name)];
  };

/**
 * Keys of the cached objects in the changed object's namespace that refer to it by name (a key
 * Secret -> the releases that use it), so fixing a Secret is acted on at once. `index` was added to
 * the referrers' informer with `refIndex`: one look-up, not a scan of every cached object.
 */
export const referrerKeys =
  <R extends KubeObject>(referrers: Pick<Informer<R>, 'byIndex'>, index: string) =>
  (obj: KubeObject): string[] =>
    referrers.byIndex(index, objectKey(obj)).map(objectKey);

/** The keys of several mappers, each once. */
export const allKeys =
  <T extends KubeObject>(...mappers: KeyMapper<T>[]): KeyMapper<T> =>
  (obj, type) => [...new Set(mappers.flatMap((m) => m(obj, type)))];

/** Decides whether a change is worth a reconcile (controller-runtime's predicates). */
export type ChangeFilter<T> = (type: ChangeType, obj: T, old?: T) => boolean;

/** Every change counts: for objects without a status (Secrets), whose edits are all content. */
const anyChange: ChangeFilter<KubeObject> = () => true;

/**
 * Skips updates that changed only the status (controller-runtime's GenerationChanged or
 * AnnotationChanged predicates). The operator's own status writes would otherwise reconcile
 * again at once: after a failure that means a second admin API call before the retry delay.
 * Spec edits bump metadata.generation; annotations, labels, finalizers and deletion show in metadata.
 */
export const ignoreStatusOnly: ChangeFilter<KubeObject> = (type, obj, old) =>
  type !== 'MODIFIED' || !old || !isDeepStrictEqual(comparableMetadata(obj), comparableMetadata(old));

function comparableMetadata(obj: KubeObject): Record<string, unknown> {
  const { resourceVersion: _rv, managedFields: _mf, ...rest } = obj.metadata as Record<string, unknown>;
  return rest;
}

/**
 * Cancels a key's reconcile in flight once its object is deleted or being deleted: a download, a
 * create or a Secret write for it is no longer wanted. The deletion's own event enqueues the key.
 */
export function cancelOnDelete<T extends KubeObject>(
  informer: Informer<T>,
  controller: Pick<Controller, 'cancel'>,
): void {
  informer.onChange((type, obj) => {
    if (type === 'DELETED' || obj.metadata.deletionTimestamp) controller.cancel(objectKey(obj));
  });
}

/** Wires an informer to a controller: every change that passes `filter` only enqueues keys. */
export function enqueueOnChange<T extends KubeObject>(
  informer: Informer<T>,
  controller: Pick<Controller, 'enqueue'>,
  mapper: KeyMapper<T> = ownKey,
  filter: ChangeFilter<T> = anyChange,
): void {
  informer.onChange((type, obj, old) => {
    if (!filter(type, obj, old)) return;
    for (const key of mapper(obj, type)) controller.enqueue(key);
  });
}
