// The reconcile every controller shares (observe -> decide -> act): load the object or notice it is
// gone, parse its spec, read its credentials, write the decided status and events, run the one
// action and record its failure. A controller supplies only what is its own: what it observes
// beyond that, its pure `decide`, and its actions.
import type { z } from 'zod';
import { type AdminApiClient, NotFoundError } from '../api/index.ts';
import type { Logger } from '../log.ts';
import type { CachedReader } from '../runtime/cached-reader.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { isConflict, isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import type { OwnedObject } from '../targets/owned.ts';
import { type ApiClients, readCredentials, secretRefText, type UsesCredentials } from './credentials.ts';
import type { Decision } from './decision-shape.ts';
import {
  afterFailure,
  classifyError,
  type Failure,
  failureEvent,
  invalidSpec,
  nextStep,
} from './failures.ts';
import { emitEvents, StatusRecord } from './status-record.ts';
import type { EventNote, EventRegarding, EventSink, JobPoll, ReconcileResult } from './types.ts';

export interface ReconcilerDeps {
  kube: KubeClient;
  clients: ApiClients;
  events: EventSink;
  logger: Logger;
  now?: () => Date;
  /** Informer-backed reads (the operator's); without them every read is a GET. */
  reads?: CachedReads;
}

/** Reads served from the operator's informers (see CachedReader). */
export interface CachedReads {
  /** The controller's own kind. */
  objects: CachedReader<KubeObject>;
  /** Secrets: contents read or written by this process, while the metadata informer shows them unchanged. */
  secrets: CachedReader<KubeObject & OwnedObject>;
}

interface ControlledResource<S> extends EventRegarding, UsesCredentials {
  metadata: EventRegarding['metadata'] & { generation?: number; deletionTimestamp?: unknown };
  status?: S;
}

/** What every controller knows before its own observations. */
export interface Loaded<T> {
  now: Date;
  /** The object with its spec parsed (defaults applied). */
  obj: T;
  /** A problem found before any API call (spec, Secret, key): nothing else is attempted. */
  blocked?: Failure;
  /**
   * Set when the object needs the admin API and its credentials are usable; observe carries it into
   * what it observes, where the actions take it from.
   */
  client?: AdminApiClient;
}

/**
 * What a decision takes hold of that other objects share (a slot of an hourly start budget, a share
 * group's one export): spent once the request it was taken for goes out, given back on every other
 * path (the call deferred, the status write conflicted, anything thrown before the request). The
 * skeleton gives back whatever was not spent when the reconcile ends, so no action has to.
 */
export interface Reservation {
  /** The request went out (the platform may count it, whatever it answered): it stays spent. */
  sent(): void;
  /** Nothing was sent: given back. Does nothing once sent or given back. */
  release(): void;
}

/**
 * What an action's effect needs of its reconcile: the status it acts on, the abort signal, and the
 * three ways its outcome goes back (the request sent, a status committed, a failure recorded).
 * Small enough for a test or a bench to build without the skeleton.
 */
export interface EffectRun<S extends object> {
  /** The status as decided, or as written since by this reconcile: what an outcome is folded onto. */
  readonly status: S;
  readonly signal: AbortSignal | undefined;
  /** The request the decision's reservation was taken for went out: it stays spent (see Reservation). */
  sent(): void;
  /** Writes an outcome's status (its conditions derived), then its events. */
  commit(step: { status: S; events: readonly EventNote[] }): Promise<void>;
  /** Records a failed action on top of `status` and says when to try again. */
  fail(status: S, f: Failure, cause: unknown): Promise<ReconcileResult>;
}

/** One reconcile of one object, as the skeleton runs it: an effect's run and its bookkeeping. */
export interface Run<T, S extends object> extends EffectRun<S> {
  obj: T;
  now: Date;
  record: StatusRecord<S>;
  /** Events being written; the reconcile ends once they are (they need not hold up its next step). */
  events: Promise<void>[];
  /** Events of a status not yet written (see `writesWithOutcome`): they go out with the next write. */
  unsent: EventNote[];
}

/** How one kind of action is performed: the skeleton runs the entry of the action decided. */
export interface ActionEntry<O, A, T, S extends object> {
  /** Performs the action (its decided status is already written, unless `writesWithOutcome`). */
  run(observed: O, action: A, run: Run<T, S>): Promise<ReconcileResult>;
  /**
   * Must reach the platform at most once: its decided status (the mark of the call) is written by
   * compare-and-swap before it, and not while the per-minute limit would hold the call.
   */
  atMostOnce?: boolean;
  /**
   * Its decided status needs no write of its own: nothing in it must be stored first, so it is
   * written together with the action's outcome, one status write (and round trip) fewer. Not
   * compare-and-swapped either: the action must be safe to repeat from a view the cache held a
   * moment too long.
   */
  writesWithOutcome?: boolean;
}

/** Every action kind but `none`, each with its one entry. */
export type ActionTable<O, A extends { kind: string }, T, S extends object> = {
  [K in Exclude<A['kind'], 'none'>]: ActionEntry<O, Extract<A, { kind: K }>, T, S>;
};

export interface Kind<T extends { spec: unknown }> {
  apiVersion: string;
  plural: string;
  specSchema: z.ZodType<T['spec']>;
  /** Log field naming the object (`release`, `agentJob`). */
  logKey: string;
}

export abstract class Reconciler<
  T extends ControlledResource<S>,
  S extends object,
  O,
  A extends { kind: string },
> {
  protected readonly deps: ReconcilerDeps;
  private readonly kind: Kind<T>;

  constructor(deps: ReconcilerDeps, kind: Kind<T>) {
    this.deps = deps;
    this.kind = kind;
  }

  /** Does this (parsed) object need the admin API at all now? Without it, no credentials are read. */
  protected abstract callsApi(obj: T): boolean;
  /** Everything else this controller observes (the platform's job, the target). */
  protected abstract observe(loaded: Loaded<T>, signal: AbortSignal | undefined): Promise<O>;
  /** Pure: what is to be done about what was observed. */
  protected abstract decide(observed: O): Decision<A, S>;
  /**
   * Every action the controller decides, run here, with the admin API client observed or for an
   * object whose work needs none (`callsApi` false). Errors become failures.
   */
  protected abstract readonly actions: ActionTable<O, A, T, S>;
  /**
   * The conditions of a status about to be written, derived from it and the failure it records:
   * every write goes through here, so no path forgets them.
   */
  protected abstract conditions(obj: T, status: S, failure: Failure | undefined, now: Date): S;

  /**
   * Takes hold of what the decision needs before its status is written (a share group's start, a
   * budget's slot), run synchronously right after `decide`: no other reconcile runs in between. What
   * it returns is given back when the reconcile ends, unless the action said it was sent.
   */
  protected claim(_observed: O, _d: Decision<A, S>): Reservation | undefined {
    return undefined;
  }
  /** The object no longer exists. */
  protected gone(_namespace: string, _name: string): void {}
  /** The reconcile of what was observed ended, however: what observe opened for it is closed. */
  protected finished(_observed: O): void {}

  /** `signal` aborts the reconcile's calls, waits and downloads when its work is no longer wanted. */
  async reconcile(namespace: string, name: string, signal?: AbortSignal): Promise<ReconcileResult> {
    let obj: T;
    try {
      const { reads } = this.deps;
      obj = reads
        ? ((await reads.objects.get(namespace, name, signal)) as unknown as T)
        : await this.deps.kube.get<T>(resourcePath(this.kind.apiVersion, this.kind.plural, namespace, name));
    } catch (e) {
      if (!isNotFound(e)) throw e;
      this.gone(namespace, name);
      return {};
    }
    const loaded = await this.load(obj);
    const observed = await this.observe(loaded, signal);
    try {
      return await this.decideAndAct(`${namespace}/${name}`, loaded, observed, signal);
    } finally {
      this.finished(observed);
    }
  }

  /** `key`: `namespace/name`, for the log. */
  private async decideAndAct(
    key: string,
    loaded: Loaded<T>,
    observed: O,
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> {
    const d = this.decide(observed);
    const reservation = this.claim(observed, d);
    try {
      return await this.reserved(key, loaded, observed, d, reservation, signal);
    } finally {
      // Whatever path ended the reconcile before its request went out gives back what it reserved.
      reservation?.release();
    }
  }

  private async reserved(
    key: string,
    loaded: Loaded<T>,
    observed: O,
    d: Decision<A, S>,
    reservation: Reservation | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> {
    this.deps.logger.debug(
      { [this.kind.logKey]: key, rule: d.rule, action: d.action, requeueAfterMs: d.requeueAfterMs },
      'decided',
    );
    const entry = this.entryOf(d.action);
    const { client } = loaded;
    // Not marked in status while the per-minute limit would hold the call: a crash while waiting
    // would leave an outcome in doubt for a call never sent.
    const slotInMs = client && entry?.atMostOnce ? client.requestDelayMs() : 0;
    if (slotInMs > 0) return { requeueAfterMs: slotInMs };

    const record = new StatusRecord<S>(this.deps.kube, this.kind.plural, loaded.obj, (written) =>
      this.deps.reads?.objects.remember(written),
    );
    const run: Run<T, S> = {
      obj: loaded.obj,
      now: loaded.now,
      sent: () => reservation?.sent(),
      record,
      get status() {
        return record.status;
      },
      signal,
      events: [],
      unsent: [],
      commit: (step) => this.commit(run, step),
      fail: (status, f, cause) => this.fail(run, status, f, cause),
    };
    try {
      return await this.commitAndAct(run, observed, d, entry, client);
    } finally {
      await Promise.all(run.events);
    }
  }

  private entryOf(action: A): ActionEntry<O, A, T, S> | undefined {
    if (action.kind === 'none') return undefined;
    return (this.actions as unknown as Record<string, ActionEntry<O, A, T, S>>)[action.kind];
  }

  private async commitAndAct(
    run: Run<T, S>,
    observed: O,
    d: Decision<A, S>,
    entry: ActionEntry<O, A, T, S> | undefined,
    client: AdminApiClient | undefined,
  ): Promise<ReconcileResult> {
    const { signal } = run;
    const { namespace, name } = run.obj.metadata;
    try {
      if (client && entry?.writesWithOutcome) {
        run.record.status = d.status;
        run.unsent.push(...d.events);
      } else await this.commit(run, d, { ifUnchanged: true });
    } catch (e) {
      if (!isConflict(e)) throw e;
      // Changed since it was read (a user, or another replica during a leader handover): decide
      // again from what is there now rather than act on a stale view.
      this.deps.logger.debug(
        { [this.kind.logKey]: `${namespace}/${name}` },
        'changed meanwhile; reconciling again',
      );
      return { requeueAfterMs: 0 };
    }
    if (!entry) return nextStep(d);
    // An object that needs the admin API acts only with a client (an object that needs none, such as
    // a release following a registry, acts on its own).
    if (!client && this.callsApi(run.obj)) return nextStep(d);
    try {
      return await entry.run(observed, d.action, run);
    } catch (e) {
      // Aborted: the work is no longer wanted (deleted, or another replica leads); write nothing.
      if (signal?.aborted) throw e;
      return this.fail(run, run.record.status, classifyError(e, secretRefText(run.obj)), e);
    }
  }

  private async load(obj: T): Promise<Loaded<T>> {
    const now = (this.deps.now ?? (() => new Date()))();
    const spec = this.kind.specSchema.safeParse(obj.spec);
    if (!spec.success) return { now, obj, blocked: invalidSpec(spec.error) };
    const parsed = { ...obj, spec: spec.data };
    if (!this.callsApi(parsed)) return { now, obj: parsed };
    const creds = await readCredentials(
      this.deps.kube,
      parsed,
      this.deps.clients.defaults,
      this.deps.reads?.secrets,
    );
    if ('failure' in creds) return { now, obj: parsed, blocked: creds.failure };
    return { now, obj: parsed, client: this.deps.clients.get(creds) };
  }

  /**
   * Writes a status with the conditions it and `failure` give (unless an outcome is `pending`), then
   * its events (an event is never told of a status that was not stored).
   */
  private async commit(
    run: Run<T, S>,
    step: { status: S; events: readonly EventNote[]; failure?: Failure; pending?: true },
    opts: { ifUnchanged?: boolean } = {},
  ): Promise<void> {
    const status = step.pending ? step.status : this.conditions(run.obj, step.status, step.failure, run.now);
    await run.record.write(status, opts);
    run.events.push(emitEvents(this.deps.events, run.obj, [...run.unsent.splice(0), ...step.events]));
  }

  /** Records a failed action on top of `status` and says when to try again. */
  private async fail(run: Run<T, S>, status: S, f: Failure, cause: unknown): Promise<ReconcileResult> {
    const { namespace, name } = run.obj.metadata;
    this.deps.logger.warn(
      { [this.kind.logKey]: `${namespace}/${name}`, reason: f.reason, err: cause },
      f.message,
    );
    await this.commit(run, { status, events: [failureEvent(f)], failure: f });
    return afterFailure(f);
  }
}

/** Polls a job on the platform: gone and failed calls are outcomes to decide on, not errors. */
export async function pollJob<R>(
  obj: UsesCredentials,
  call: () => Promise<R>,
  signal: AbortSignal | undefined,
): Promise<JobPoll<R>> {
  try {
    return { kind: 'job', job: await call() };
  } catch (e) {
    if (signal?.aborted) throw e;
    if (e instanceof NotFoundError) return { kind: 'notFound' };
    return { kind: 'failed', failure: classifyError(e, secretRefText(obj)) };
  }
}
