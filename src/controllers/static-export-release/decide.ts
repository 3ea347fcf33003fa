// What a StaticExportRelease needs next, as a pure function of what was observed. The reconciler
// observes (CR, Secret, export job), calls `decide`, performs the one action it names and folds the
// outcome back into status with the `after*` functions below. All behaviour lives here.

import {
  completedDurationMs,
  type ExportObservations,
  nextPollDelayMs,
  observe,
  withDuration,
} from '../../api/poll-schedule.ts';
import {
  HISTORY_LIMIT,
  parseDuration,
  RECONCILE_REQUEST_ANNOTATION,
  REQUESTED_AT_ANNOTATION,
  type StaticExportRelease,
  type StaticExportReleaseStatus,
} from '../../crd/index.ts';
import type { ConditionReason } from '../../crd/reasons.ts';
import {
  absent,
  type ConditionInput,
  type Progress,
  progressConditions,
  RECONCILING,
} from '../../runtime/conditions.ts';
import type { Workload, WorkloadRef } from '../../targets/workloads.ts';
import { withConditions } from '../conditions.ts';
import { type Failure, failureConditions, failureEvent } from '../failures.ts';
import type { EventNote } from '../types.ts';
import { decideOci, type OciAction, type OciCheck } from './oci.ts';
import { type Roll, rolloutStalledMessage, rolloutStep } from './rollout.ts';
import type { SharedExport } from './shared-exports.ts';

export type Status = StaticExportReleaseStatus;

/** Result of polling the export job named in `status.export` (only when one is in flight). */
export type ExportPoll =
  | {
      kind: 'job';
      state: string;
      progress?: number;
      pageCount?: number;
      error?: string;
      /** The platform's own timestamps of the job (how long a completed one took). */
      createdAt?: string;
      updatedAt?: string;
    }
  | { kind: 'notFound' }
  | { kind: 'failed'; failure: Failure };

export interface Observed {
  now: Date;
  release: StaticExportRelease;
  /** A problem found before any API call (spec, Secret, key); nothing else is attempted. */
  blocked?: Failure;
  poll?: ExportPoll;
  /** The target no longer holds the served version (deleted or edited by someone else). */
  targetDrifted?: boolean;
  /** The workloads serving the release (observed only while a version is served and no export runs). */
  workloads?: Workload[];
  /** spec.rollout.workloadRefs that do not exist. */
  missingWorkloads?: WorkloadRef[];
  /**
   * The export in flight for this release's share group (same account, domain and export options),
   * started by another release or by this one; absent when the group has none.
   */
  shared?: SharedExport;
  /** Registry source: what spec.source.oci.tag resolved to (only when a check was due). */
  oci?: OciCheck;
  /**
   * The operator's cache does not hold every release yet (it is starting): another release of the
   * site may record an export in flight that `shared` cannot know of, so nothing is started yet.
   */
  peersUnknown?: boolean;
}

export type StartReason = 'Initial' | 'SpecChanged' | 'Requested' | 'Interval' | 'Retry' | 'JobVanished';
/** NewContent: a finished export; Renew: a fresh link for the served job; Repair: Renew because the target drifted. */
export type PublishMode = 'NewContent' | 'Renew' | 'Repair' | 'Pin';

export type Action =
  | { kind: 'none' }
  | { kind: 'start'; reason: StartReason }
  | { kind: 'publish'; mode: PublishMode; jobId: string; expectVersion?: string }
  | OciAction
  | Roll;

export type { EventNote };

export interface Decision {
  action: Action;
  /** Status to write before the action (or as the whole result when the action is `none`). */
  status: Status;
  events: EventNote[];
  /** Reconcile again after this long (polling, renewal, next interval); undefined = wait for a change. */
  requeueAfterMs?: number;
  /** What went wrong; its retry rule (fixed delay, backoff or wait) replaces `requeueAfterMs`. */
  failure?: Failure;
}

export interface Tunables {
  /** After a failed export with nothing served yet, try again after this long. */
  exportRetryMs: number;
  /**
   * After a start whose answer was never recorded, wait this long before starting again: the
   * admin API has no idempotency key, so a job it may have started is left to finish first.
   */
  startOutcomeWaitMs: number;
}

export const DEFAULT_TUNABLES: Tunables = { exportRetryMs: 5 * 60_000, startOutcomeWaitMs: 10 * 60_000 };

export const START_OUTCOME_UNKNOWN = 'StartOutcomeUnknown' satisfies ConditionReason;

const inFlight = (s: Status) => Boolean(s.export?.jobId && !s.export.finishedAt);

/** What the status holds of the export in flight and the site's past exports, for the poll schedule. */
function exportObservations(s: Status, now: Date): ExportObservations {
  const e = s.export ?? {};
  return {
    startedAt: e.startedAt ? Date.parse(e.startedAt) : now.getTime(),
    ...(e.state === undefined ? {} : { state: e.state }),
    samples: (e.progressSamples ?? []).map((p) => ({ at: Date.parse(p.at), progress: p.progress })),
    previousDurationsMs: (s.exportDurationsSeconds ?? []).map((sec) => sec * 1000),
  };
}

/**
 * When to poll the export in flight next (the schedule shared with the CLI); undefined once it
 * reached a final state. Right after a start (no poll yet) this is the first look.
 */
export function exportPollDelayMs(s: Status, now: Date): number | undefined {
  return nextPollDelayMs(exportObservations(s, now), now.getTime());
}

function exportingCondition(s: Status): ConditionInput<ConditionReason> {
  const e = s.export;
  if (e?.jobId && !e.finishedAt) {
    const progress = e.progress === undefined ? '' : `, ${Math.round(e.progress)}%`;
    const pages = e.pageCount === undefined ? '' : `, ${e.pageCount} pages`;
    return {
      type: 'Exporting',
      status: 'True',
      reason: 'Exporting',
      message: `Export job ${e.jobId} is ${e.state ?? 'queued'}${progress}${pages}`,
    };
  }
  return { type: 'Exporting', status: 'False', reason: 'Idle', message: 'No export in progress' };
}

/** What is under way (kstatus: Reconciling=True): an export in flight, or a rollout not yet done. */
function reconcilingOf(s: Status): Progress<ConditionReason> | undefined {
  if (inFlight(s)) return { reason: 'Exporting', message: exportingCondition(s).message };
  const r = s.current?.rollout;
  if (r && !r.completedAt && !r.stalled) {
    const names = r.workloads.map((w) => `${w.kind}/${w.name}`).join(', ');
    return { reason: 'RollingOut', message: `Rolling out ${r.version} to ${names}` };
  }
  return undefined;
}

/** The spec generation the last export was started for (statuses from before it was recorded: observedGeneration). */
const exportedGeneration = (s: Status) => s.export?.generation ?? s.observedGeneration ?? 0;

/** The spec changed since the last export started, so another follows (a pinned release does not re-export). */
function specExportPending(release: StaticExportRelease, s: Status): boolean {
  return (
    !release.spec.pinnedVersion &&
    Boolean(s.export?.jobId || s.current?.version) &&
    (release.metadata.generation ?? 0) !== exportedGeneration(s)
  );
}

/** Ready/Stalled for a failure; the served version (if any) stays in `current`. The spec was seen. */
export function withFailure(status: Status, f: Failure, generation: number | undefined, now: Date): Status {
  return withConditions(
    generation === undefined ? status : { ...status, observedGeneration: generation },
    [...failureConditions(f, reconcilingOf(status)), exportingCondition(status)],
    generation,
    now,
  );
}

/**
 * Conditions when no call failed: Ready follows what is served and how the last export ended;
 * Reconciling while an export or rollout is under way, Stalled while a rollout is stalled. The
 * generation counts as observed unless its spec change still waits for its export (kstatus then
 * says InProgress, not Current, in between).
 */
export function withHealthy(release: StaticExportRelease, status: Status, now: Date): Status {
  const generation = release.metadata.generation;
  const c = status.current;
  const e = status.export;
  const refused = status.oci?.rejected;
  const lastFailed = e?.state === 'failed' && e.finishedAt;
  const ready: ConditionInput<ConditionReason> = lastFailed
    ? {
        type: 'Ready',
        status: 'False',
        reason: 'ExportFailed',
        message: e?.message ?? 'The last export failed',
      }
    : refused && refused.digest === status.oci?.digest
      ? {
          type: 'Ready',
          status: 'False',
          reason: 'PublishGateFailed',
          message: `Image ${refused.digest} was not published: ${refused.message}. ${
            c?.version ? `Still serving ${c.version}` : 'Nothing is served yet'
          }; a new digest under the tag is checked at the next interval (spec.publishGate sets the checks)`,
        }
      : e?.finishedAt && e.publishGateFailure
        ? {
            type: 'Ready',
            status: 'False',
            reason: 'PublishGateFailed',
            message: `Export job ${e.jobId} was not published: ${e.publishGateFailure}. ${
              c?.version ? `Still serving ${c.version}` : 'Nothing is served yet'
            }; the next export is tried at the next trigger or interval (spec.publishGate sets the checks)`,
          }
        : c?.rollout?.stalled
          ? {
              type: 'Ready',
              status: 'False',
              reason: 'RolloutStalled',
              message: rolloutStalledMessage(c.rollout),
            }
          : c?.version
            ? {
                type: 'Ready',
                status: 'True',
                reason: 'Published',
                message: c.renewalTime
                  ? `Serving ${c.version}; link renewal at ${c.renewalTime}${renewBeforeIgnored(release, c)}`
                  : `Serving ${c.version}`,
              }
            : {
                type: 'Ready',
                status: 'False',
                reason: 'Exporting',
                message: 'Waiting for the first export',
              };
  const observed =
    generation === undefined || specExportPending(release, status)
      ? status
      : { ...status, observedGeneration: generation };
  return withConditions(
    observed,
    [
      ready,
      ...progressConditions({
        ...(c?.rollout?.stalled
          ? { stalled: { reason: 'RolloutStalled', message: rolloutStalledMessage(c.rollout) } }
          : {}),
        reconciling: reconcilingOf(status),
      }),
      exportingCondition(status),
    ],
    generation,
    now,
  );
}

/** When the next export is due on its own (interval or retry after failure), if ever. */
function nextExportDue(release: StaticExportRelease, tun: Tunables): number | undefined {
  const s = release.status ?? {};
  const started = s.export?.startedAt ? Date.parse(s.export.startedAt) : undefined;
  if (started === undefined) return undefined;
  const interval = release.spec.interval ? parseDuration(release.spec.interval) : undefined;
  const failedWithNothingServed =
    (s.export?.state === 'failed' || s.export?.publishGateFailure !== undefined) && !s.current?.version;
  const candidates = [
    interval === undefined ? undefined : started + interval,
    failedWithNothingServed && s.export?.finishedAt
      ? Date.parse(s.export.finishedAt) + tun.exportRetryMs
      : undefined,
  ].filter((t): t is number => t !== undefined);
  return candidates.length ? Math.min(...candidates) : undefined;
}

/**
 * The export requests on the release (our annotation, and Flux's `reconcile.fluxcd.io/requestedAt`
 * that `flux`-style tools set), each as its `status.lastHandled…` field records it once handled.
 */
export function requestsOf(
  release: StaticExportRelease,
): Pick<Status, 'lastHandledRequestedAt' | 'lastHandledReconcileAt'> {
  const a = release.metadata.annotations ?? {};
  return {
    ...(a[REQUESTED_AT_ANNOTATION] === undefined
      ? {}
      : { lastHandledRequestedAt: a[REQUESTED_AT_ANNOTATION] }),
    ...(a[RECONCILE_REQUEST_ANNOTATION] === undefined
      ? {}
      : { lastHandledReconcileAt: a[RECONCILE_REQUEST_ANNOTATION] }),
  };
}

/** Some request annotation has a value not yet handled. */
function requestPending(release: StaticExportRelease, s: Status): boolean {
  const r = requestsOf(release);
  return (
    (r.lastHandledRequestedAt !== undefined && r.lastHandledRequestedAt !== s.lastHandledRequestedAt) ||
    (r.lastHandledReconcileAt !== undefined && r.lastHandledReconcileAt !== s.lastHandledReconcileAt)
  );
}

function startReason(release: StaticExportRelease, now: Date, tun: Tunables): StartReason | undefined {
  const s = release.status ?? {};
  if (!s.export?.jobId && !s.current?.version) return 'Initial';
  if (specExportPending(release, s)) return 'SpecChanged';
  if (requestPending(release, s)) return 'Requested';
  const due = nextExportDue(release, tun);
  if (due !== undefined && now.getTime() >= due) return s.current?.version ? 'Interval' : 'Retry';
  return undefined;
}

export const clampDelay = (ms: number) => Math.max(1_000, ms);

/** While another release of the group is starting the export, look again this soon (it also wakes us). */
export const JOIN_WAIT_MS = 1_000;

/**
 * Whether the group's export in flight is one this release should take part in: not its own job
 * already, and either newer than its last export (another release's trigger or interval exports
 * the site for all) or wanted now anyway (`wants`: this release has its own reason to export).
 */
export function joinable(status: Status, shared: SharedExport | undefined, wants: boolean): boolean {
  if (!shared || (shared.jobId !== undefined && shared.jobId === status.export?.jobId)) return false;
  const last = status.export?.startedAt;
  return wants || last === undefined || Date.parse(shared.startedAt) > Date.parse(last);
}

/** Joining the group's export: its job id is recorded as this release's own, nothing is sent. */
function joined(
  release: StaticExportRelease,
  status: Status,
  shared: Required<Pick<SharedExport, 'jobId'>> & SharedExport,
  now: Date,
): Decision {
  const { start: _, ...base } = status;
  const generation = release.metadata.generation;
  const s: Status = {
    ...base,
    export: {
      jobId: shared.jobId,
      state: shared.state ?? 'queued',
      startedAt: shared.startedAt,
      joined: true,
      ...(generation === undefined ? {} : { generation }),
    },
    ...requestsOf(release),
  };
  return {
    action: { kind: 'none' },
    status: withHealthy(release, s, now),
    events: [
      {
        type: 'Normal',
        reason: 'ExportJoined',
        note: `Joined export job ${shared.jobId} for ${release.spec.domain}, started for a release with the same key and export options; no second export is started`,
      },
    ],
    // The job is polled at once (a member's poll answers it if fresh).
    requeueAfterMs: clampDelay(0),
  };
}

/** Marked before the start call (written only if the release did not change since it was read). */
const starting = (s: Status, now: Date): Status => ({
  ...s,
  start: { phase: 'Starting', since: now.toISOString() },
});

export function decide(o: Observed, tun: Tunables = DEFAULT_TUNABLES): Decision {
  const { release, now } = o;
  const gen = release.metadata.generation;
  let status: Status = release.status ?? {};
  const none = (s: Status, requeueAfterMs?: number, events: EventNote[] = []): Decision => ({
    action: { kind: 'none' },
    status: s,
    events,
    ...(requeueAfterMs === undefined ? {} : { requeueAfterMs: clampDelay(requeueAfterMs) }),
  });
  const failed = (s: Status, f: Failure): Decision => ({
    action: { kind: 'none' },
    status: withFailure(s, f, gen, now),
    events: [failureEvent(f)],
    failure: f,
  });

  if (release.metadata.deletionTimestamp) return none(status);
  // Suspended: nothing is under way any more, and this spec is seen (kstatus must not wait on it).
  if (release.spec.suspend) {
    const seen = gen === undefined ? status : { ...status, observedGeneration: gen };
    return none(withConditions(seen, [absent(RECONCILING)], gen, now));
  }
  if (release.spec.source?.oci) return decideOci(o);

  // First of all, whatever else is wrong now: a start that may have been sent is not repeated
  // before the wait is over.
  const pending = status.start;
  if (pending) {
    const retryAt = Date.parse(pending.since) + tun.startOutcomeWaitMs;
    if (now.getTime() < retryAt) {
      const f: Failure = {
        reason: START_OUTCOME_UNKNOWN,
        message:
          `The operator did not learn whether the export it started at ${pending.since} exists (it stopped, lost the ` +
          'connection or could not record the answer). The admin API has no idempotency key, so it does not start ' +
          `another one before ${new Date(retryAt).toISOString()}`,
        stalled: false,
        retryAfterMs: retryAt - now.getTime(),
      };
      return {
        action: { kind: 'none' },
        status: withFailure({ ...status, start: { ...pending, phase: 'OutcomeUnknown' } }, f, gen, now),
        events: pending.phase === 'Starting' ? [failureEvent(f)] : [],
        failure: f,
      };
    }
    // Waited long enough: whatever asked for that start (still unrecorded as handled) asks again.
    const { start: _, ...rest } = status;
    status = rest;
  }

  if (o.blocked) return failed(status, o.blocked);

  // An export in flight finishes first, whatever else changed meanwhile.
  if (inFlight(status)) {
    const exp = status.export ?? {};
    const jobId = exp.jobId ?? '';
    if (exp.state === 'completed')
      return { action: { kind: 'publish', mode: 'NewContent', jobId }, status, events: [] };
    const poll = o.poll;
    if (!poll) return none(status, exportPollDelayMs(status, now));
    if (poll.kind === 'failed') return failed(status, poll.failure);
    if (poll.kind === 'notFound') {
      const s: Status = {
        ...status,
        export: {
          ...exp,
          state: 'vanished',
          finishedAt: now.toISOString(),
          message: 'The export job no longer exists',
        },
      };
      // Another release of the group already started (or is starting) the next one: join it.
      if (o.shared && o.shared.jobId !== jobId)
        return none(withHealthy(release, s, now), JOIN_WAIT_MS, [
          {
            type: 'Warning',
            reason: 'ExportVanished',
            note: `Export job ${jobId} no longer exists; joining the export started for the same site`,
          },
        ]);
      return {
        action: { kind: 'start', reason: 'JobVanished' },
        status: starting(s, now),
        events: [
          {
            type: 'Warning',
            reason: 'ExportVanished',
            note: `Export job ${jobId} no longer exists; starting a new export`,
          },
        ],
      };
    }
    const seen = observe(exportObservations(status, now), poll, now.getTime());
    const polled = {
      ...exp,
      state: poll.state,
      ...(poll.progress === undefined ? {} : { progress: poll.progress }),
      ...(poll.pageCount === undefined ? {} : { pageCount: poll.pageCount }),
      ...(seen.samples?.length
        ? {
            progressSamples: seen.samples.map((p) => ({
              at: new Date(p.at).toISOString(),
              progress: p.progress,
            })),
          }
        : {}),
    };
    if (poll.state === 'completed') {
      const took = completedDurationMs(poll, seen.startedAt, now.getTime());
      const s = {
        ...status,
        export: { ...polled, progress: 100 },
        exportDurationsSeconds: withDuration(status.exportDurationsSeconds, Math.round(took) / 1000),
      };
      return {
        action: { kind: 'publish', mode: 'NewContent', jobId },
        status: s,
        events: [
          {
            type: 'Normal',
            reason: 'ExportCompleted',
            note: `Export job ${jobId} completed${poll.pageCount ? ` (${poll.pageCount} pages)` : ''}`,
          },
        ],
      };
    }
    if (poll.state === 'failed') {
      const message = `Export job ${jobId} failed${poll.error ? `: ${poll.error}` : ''}`;
      const s: Status = { ...status, export: { ...polled, finishedAt: now.toISOString(), message } };
      const due = nextExportDue({ ...release, status: s }, tun);
      return none(withHealthy(release, s, now), due === undefined ? undefined : due - now.getTime(), [
        { type: 'Warning', reason: 'ExportFailed', note: message },
      ]);
    }
    // queued, running, or a state this client does not know yet: keep polling.
    const s = { ...status, export: polled };
    return none(withHealthy(release, s, now), exportPollDelayMs(s, now));
  }

  const pinned = release.spec.pinnedVersion;
  if (pinned && status.current?.version !== pinned) {
    const entry = status.history?.find((h) => h.version === pinned);
    if (!entry?.jobId) {
      const known = status.history?.map((h) => h.version).join(', ') || 'none yet';
      const f: Failure = {
        reason: 'PinnedVersionUnknown',
        message: `spec.pinnedVersion ${pinned} is not in status.history (known: ${known}); pin one of those or remove the pin`,
        stalled: true,
      };
      return failed({ ...status, observedGeneration: gen }, f);
    }
    return {
      action: { kind: 'publish', mode: 'Pin', jobId: entry.jobId, expectVersion: pinned },
      status: { ...status, observedGeneration: gen },
      events: [],
    };
  }

  if (!pinned) {
    const reason = startReason(release, now, tun);
    if (joinable(status, o.shared, reason !== undefined) && o.shared) {
      const { jobId } = o.shared;
      if (jobId !== undefined) return joined(release, status, { ...o.shared, jobId }, now);
      // Another release of the group is starting it: join once it has an id, never start a second.
      return none(status, JOIN_WAIT_MS);
    }
    // Looked at again once every release is known: it may join the job one of them records.
    if (reason && o.peersUnknown) return none(status, JOIN_WAIT_MS);
    if (reason) return { action: { kind: 'start', reason }, status: starting(status, now), events: [] };
  } else if ((status.observedGeneration ?? 0) !== (gen ?? 0)) {
    // A pinned release does not re-export on spec changes; this generation is seen, and what else
    // is due (renewal, the workloads of a changed spec.rollout) follows.
    status = { ...status, observedGeneration: gen };
  }

  const renewal = status.current?.renewalTime ? Date.parse(status.current.renewalTime) : undefined;
  if (status.current?.jobId && renewal !== undefined && now.getTime() >= renewal) {
    return { action: { kind: 'publish', mode: 'Renew', jobId: status.current.jobId }, status, events: [] };
  }
  // The link is never stored, so restoring a drifted target takes a fresh one.
  if (status.current?.jobId && o.targetDrifted) {
    return { action: { kind: 'publish', mode: 'Repair', jobId: status.current.jobId }, status, events: [] };
  }

  // Steady state: the workloads roll or are watched; else nothing to do until the link needs
  // renewing or the next interval.
  // A pinned release handles a request without exporting: its link is renewed as usual.
  const steady = pinned ? { ...status, ...requestsOf(release) } : status;
  return settle(o, steady, untilNextWork(release, now, tun));
}

/**
 * Nothing to fetch or publish: the workloads roll or are watched; else nothing to do until
 * `nextWorkMs` (link renewal, the next interval).
 */
export function settle(o: Observed, status: Status, nextWorkMs: number | undefined): Decision {
  const { release, now } = o;
  const gen = release.metadata.generation;
  let steady = status;
  const step = rolloutStep(release, o.workloads, now);
  if (step?.kind === 'roll') return { action: step, status: steady, events: [] };
  if (step && steady.current) steady = { ...steady, current: { ...steady.current, rollout: step.rollout } };
  const missing = o.missingWorkloads ?? [];
  if (missing.length) {
    const f: Failure = {
      reason: 'WorkloadNotFound',
      message: `spec.rollout.workloadRefs names ${missing.map((m) => `${m.kind}/${m.name}`).join(', ')}, not found in namespace ${release.metadata.namespace}: create it or remove the reference`,
      stalled: true,
      retryAfterMs: 60_000,
    };
    return {
      action: { kind: 'none' },
      status: withFailure(steady, f, gen, now),
      events: [...(step?.events ?? []), failureEvent(f)],
      failure: f,
    };
  }
  const next = [nextWorkMs, step?.requeueAfterMs].filter((t): t is number => t !== undefined);
  return {
    action: { kind: 'none' },
    status: withHealthy(release, steady, now),
    events: step?.events ?? [],
    ...(next.length ? { requeueAfterMs: clampDelay(Math.min(...next)) } : {}),
  };
}

function untilNextWork(release: StaticExportRelease, now: Date, tun: Tunables): number | undefined {
  const s = release.status ?? {};
  const times = [
    s.current?.renewalTime ? Date.parse(s.current.renewalTime) : undefined,
    release.spec.pinnedVersion ? undefined : nextExportDue(release, tun),
  ].filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) - now.getTime() : undefined;
}

// ---- Folding outcomes of actions back into status (pure as well) ----

/** Right after the export job started: record its id first of all (crash safety); the mark goes. */
export function afterStart(
  o: Observed,
  jobId: string,
  state: string,
): { status: Status; events: EventNote[] } {
  const { release, now } = o;
  const { start: _, ...base } = release.status ?? {};
  const generation = release.metadata.generation;
  const s: Status = {
    ...base,
    export: {
      jobId,
      state,
      progress: 0,
      startedAt: now.toISOString(),
      ...(generation === undefined ? {} : { generation }),
    },
    ...requestsOf(release),
  };
  return {
    status: withHealthy(release, s, now),
    events: [
      {
        type: 'Normal',
        reason: 'ExportStarted',
        note: `Started export job ${jobId} for ${release.spec.domain}`,
      },
    ],
  };
}

/**
 * The start call failed: if it may have reached the platform the mark stays (the next reconcile
 * reports StartOutcomeUnknown and waits); if it certainly did not, the mark goes.
 */
export function afterStartFailed(status: Status, mayHaveStarted: boolean): Status {
  if (mayHaveStarted) return status;
  const { start: _, ...rest } = status;
  return rest;
}

export interface PublishOutcome {
  mode: PublishMode;
  jobId: string;
  version: string;
  sizeBytes?: number;
  /** HTML pages of the fetched site (NewContent, Pin): the next publish gate's baseline. */
  pageCount?: number;
  expiresAt: Date;
  /** Whether the target was written (false: it already held these values). */
  wrote: boolean;
}

/**
 * Says so when spec.renewBefore is not shorter than the link's lifetime: renewalTime then renews at
 * a third of the lifetime instead (renewing at once would renew in a loop).
 */
function renewBeforeIgnored(release: StaticExportRelease, c: NonNullable<Status['current']>): string {
  const requested = release.spec.renewBefore ? parseDuration(release.spec.renewBefore) : undefined;
  if (requested === undefined || !c.renewalTime || !c.expiresAt) return '';
  const before = Date.parse(c.expiresAt) - Date.parse(c.renewalTime);
  if (requested <= before) return '';
  const lifetime = Math.round((before * 3) / 1000);
  return ` (spec.renewBefore ${release.spec.renewBefore} is not shorter than the link's lifetime of ${lifetime} s: renewing a third of the lifetime ahead instead)`;
}

/** When to renew a link: `renewBefore` ahead of expiry; default (or when too long) a third of its lifetime. */
export function renewalTime(expiresAt: Date, issuedAt: Date, renewBefore: string | undefined): Date {
  const lifetime = expiresAt.getTime() - issuedAt.getTime();
  const requested = renewBefore ? parseDuration(renewBefore) : undefined;
  const before = requested !== undefined && requested < lifetime ? requested : lifetime / 3;
  return new Date(expiresAt.getTime() - before);
}

export function afterPublish(o: Observed, out: PublishOutcome): { status: Status; events: EventNote[] } {
  const { release, now } = o;
  const base = release.status ?? {};
  const finishedExport =
    out.mode === 'NewContent' && base.export
      ? { ...base.export, state: 'completed', finishedAt: now.toISOString() }
      : base.export;
  const unchanged = out.mode === 'NewContent' && base.current?.version === out.version;
  const pageCount =
    out.pageCount ?? (out.mode === 'Renew' || out.mode === 'Repair' ? base.current?.pageCount : undefined);
  const counted = pageCount === undefined ? {} : { pageCount };
  if (unchanged) {
    // Served before page counts were recorded: this fills in the baseline.
    const s = {
      ...base,
      ...(base.current ? { current: { ...base.current, ...counted } } : {}),
      ...(finishedExport ? { export: finishedExport } : {}),
    };
    return {
      status: withHealthy(release, s, now),
      events: [
        {
          type: 'Normal',
          reason: 'Unchanged',
          note: `Export job ${out.jobId} has the content already served (${out.version})`,
        },
      ],
    };
  }
  // A renewal is recorded as such (it may roll the workloads); the last rollout is kept to compare.
  const renewedAt = out.mode === 'Renew' ? now.toISOString() : base.current?.renewedAt;
  const current = {
    version: out.version,
    jobId: out.jobId,
    ...(out.sizeBytes === undefined ? {} : { sizeBytes: out.sizeBytes }),
    ...counted,
    expiresAt: out.expiresAt.toISOString(),
    renewalTime: renewalTime(out.expiresAt, now, release.spec.renewBefore).toISOString(),
    appliedAt: out.wrote || !base.current?.appliedAt ? now.toISOString() : base.current.appliedAt,
    ...(renewedAt === undefined ? {} : { renewedAt }),
    ...(base.current?.rollout ? { rollout: base.current.rollout } : {}),
  };
  const linkOnly = out.mode === 'Renew' || out.mode === 'Repair';
  const history = linkOnly
    ? base.history
    : [
        { version: out.version, jobId: out.jobId, ...counted, appliedAt: now.toISOString() },
        ...(base.history ?? []).filter((h) => h.version !== out.version),
      ].slice(0, HISTORY_LIMIT);
  const s: Status = {
    ...base,
    current,
    ...(history ? { history } : {}),
    ...(finishedExport ? { export: finishedExport } : {}),
  };
  const event: EventNote =
    out.mode === 'Renew'
      ? {
          type: 'Normal',
          reason: 'LinkRenewed',
          note: `Renewed the bundle link of ${out.version}; it expires at ${current.expiresAt}`,
        }
      : out.mode === 'Repair'
        ? {
            type: 'Warning',
            reason: 'TargetRepaired',
            note: `The target no longer held ${out.version}; wrote it again with a fresh link`,
          }
        : {
            type: 'Normal',
            reason: 'Published',
            note: `Published ${out.version} from export job ${out.jobId}${pageCount === undefined ? '' : ` (${pageCount} pages)`}`,
          };
  return { status: withHealthy(release, s, now), events: [event] };
}

/**
 * A finished export whose content failed the publish gate: nothing is written, `current` keeps
 * serving, and the export counts as handled (no re-export until the next trigger or interval).
 */
export function afterPublishGateFailed(
  o: Observed,
  rejected: { jobId: string; version: string; message: string },
  tun: Tunables = DEFAULT_TUNABLES,
): { status: Status; events: EventNote[]; requeueAfterMs?: number } {
  const { release, now } = o;
  const base = release.status ?? {};
  const s: Status = {
    ...base,
    export: {
      ...base.export,
      state: 'completed',
      finishedAt: now.toISOString(),
      publishGateFailure: rejected.message,
    },
  };
  const served = base.current?.version;
  const next = untilNextWork({ ...release, status: s }, now, tun);
  return {
    status: withHealthy(release, s, now),
    events: [
      {
        type: 'Warning',
        reason: 'PublishGateFailed',
        note: `Export job ${rejected.jobId} (${rejected.version}) was not published: ${rejected.message}; ${
          served ? `still serving ${served}` : 'nothing is served yet'
        }`,
      },
    ],
    ...(next === undefined ? {} : { requeueAfterMs: clampDelay(next) }),
  };
}
