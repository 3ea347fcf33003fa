// Starting an export: the start rule's effect (export/join-or-start.ts decides it) and the pure fold
// of its outcome. The call goes out at most once: the decided status (the start's mark) is stored by
// compare-and-swap before it (the table's `atMostOnce`); the outcome is started, busy (409), limited
// (429) or failed, and a failure that may follow the job's creation keeps the mark
// (StartOutcomeUnknown). The budget's slot is spent (`run.sent()`) by every answer that may count
// against the organization's hour; on every other path the reconcile skeleton gives it back.
import {
  ExportBusyError,
  ExportStartLimitError,
  HOUR_MS,
  type StartedExport,
  startMayHaveCreatedJob,
} from '../../../api/index.ts';
import type { StaticExportRelease } from '../../../crd/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../../project.ts';
import { secretRefText } from '../../credentials.ts';
import { classifyError } from '../../failures.ts';
import type { ReconcileResult } from '../../types.ts';
import { withoutRecordedStart } from '../budget/recorded-starts.ts';
import { meant, type ReleaseRun, type Step, settle } from '../release-effect.ts';
import type { Folded, Snapshot, Status } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import { exportPollDelayMs, medianExportMs, untilRenewalOr } from '../schedule.ts';
import type { PlatformLook } from '../sources/source.ts';
import { exportTarget, siteName, startedRevision } from './export-site.ts';
import { requestsOf } from './start-reason.ts';

/** What a start call came to. */
export type StartOutcome =
  /** The job exists: `at` is when the answer arrived. */
  | { kind: 'started'; jobId: string; state: string; at: Date }
  /** 409: a job of the deployment is active that no release here recorded. */
  | { kind: 'busy' }
  /** 429: the start budget group is blocked until `until` (ms since the epoch). */
  | { kind: 'limited'; until: number }
  /** Anything else; `mayHaveStarted`: the answer can follow the job's creation (5xx, reset, timeout). */
  | { kind: 'failed'; mayHaveStarted: boolean; error: unknown };

/** A start's step, and for a 409 until when its project counts as busy (the budget group holds it). */
export type StartStep = Step & { busyUntil?: number };

/** Starts the export the share group claimed for this release, then folds and commits what came of it. */
export async function startExport(
  options: Pick<ReleaseReconcilerOptions, 'now'>,
  look: PlatformLook,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o, visit, budget } = look;
  const outcome = await callStart(look, run, options.now ?? (() => new Date()));
  const step = foldStart({ now: o.now, release: meant(o.release, run) }, outcome);
  // The share group and the budget learn of it before the status is written: a 409 or 429 closes
  // the group's start; a 409 holds the project, a 429 the group (limited: held already).
  if (outcome.kind === 'busy' || outcome.kind === 'limited') visit.close();
  if (step.busyUntil !== undefined) budget?.busy(step.busyUntil);
  if (outcome.kind === 'failed') visit.startFailed();
  const result = await settle(run, step);
  // Recorded (should that write fail, the failure is recorded on top of it): the group's other
  // releases join this job (they are woken for it). A job whose id could not be recorded is
  // nobody's to join: its start's outcome counts as unknown.
  if (outcome.kind === 'started') visit.started(outcome.jobId, outcome.at.toISOString());
  return result;
}

/**
 * Whether a failed start's request may count against the organization's hour: a 409 or 429 (the
 * vendor does not say they do not: assumed they may), or an answer that can follow the job's
 * creation. Anything else (sent or not: a refusal of the request itself, 400, 401, 403, 404, the
 * per-minute limit) started nothing: its slot is given back.
 */
const mayCount = (e: unknown) =>
  e instanceof ExportBusyError || e instanceof ExportStartLimitError || startMayHaveCreatedJob(e);

/** The call itself: the slot is spent once the request may count; a 429 blocks the budget group. */
async function callStart(
  { observed: o, budget }: PlatformLook,
  run: ReleaseRun,
  now: () => Date,
): Promise<StartOutcome> {
  let started: StartedExport;
  try {
    // Aborted (deleted, or another replica leads) even once sent: the mark stays, so a start cut
    // short is reported and waited out, never repeated at once (and its slot stays spent).
    started = await o.client.startExport(
      exportTarget(o.release.spec),
      run.signal ? { signal: run.signal } : {},
    );
  } catch (e) {
    if (run.signal?.aborted) {
      run.sent();
      throw e;
    }
    if (mayCount(e)) run.sent();
    if (e instanceof ExportBusyError) return { kind: 'busy' };
    if (e instanceof ExportStartLimitError && budget)
      return { kind: 'limited', until: budget.refused(e.retryAfterMs) };
    return { kind: 'failed', mayHaveStarted: startMayHaveCreatedJob(e), error: e };
  }
  run.sent();
  // Started as the answer arrived: the platform counts its duration from about then (its
  // createdAt), so the site's previous durations point at the end, not a start call's time early.
  return { kind: 'started', jobId: started.jobId, state: started.status ?? 'queued', at: now() };
}

/**
 * What a start's outcome makes of the release (`release` as meant, its mark stored). Started: the
 * job is recorded, first looked at soon when nothing is known (a small site's export may be done at
 * once), else when this site's exports usually end. A 409 is waited out by every release of the
 * project, then started once more; a 429 blocks the start budget group until the platform allows
 * starts again: both keep their slot and their place in status.recentStarts. A failure that may
 * have started a job keeps its mark (StartOutcomeUnknown); any other started nothing: the mark goes,
 * and the start is no longer recorded.
 */
export function foldStart({ release, now }: Snapshot, outcome: StartOutcome): StartStep {
  const status = release.status ?? {};
  switch (outcome.kind) {
    case 'started': {
      const next = afterStart({ now: outcome.at, release }, outcome.jobId, outcome.state);
      return { kind: 'commit', ...next, requeueAfterMs: exportPollDelayMs(next.status, outcome.at) ?? 0 };
    }
    case 'busy': {
      const waitMs = busyWaitMs(status);
      const next = afterStartBusy({ now, release }, waitMs);
      return {
        kind: 'commit',
        ...next,
        requeueAfterMs: untilRenewalOr(next.status, waitMs, now),
        busyUntil: now.getTime() + waitMs,
      };
    }
    case 'limited': {
      const next = afterStartRefused({ now, release }, outcome.until);
      return {
        kind: 'commit',
        ...next,
        requeueAfterMs: untilRenewalOr(next.status, outcome.until - now.getTime(), now),
      };
    }
    case 'failed':
      return {
        kind: 'fail',
        status: afterStartFailed(status, outcome.mayHaveStarted),
        failure: classifyError(outcome.error, secretRefText(release)),
        cause: outcome.error,
      };
  }
}

/**
 * At most this many start requests per hour meet a job of the project already active (409): each
 * may count against the organization's hour, so a 409 is waited out at least an hour's share.
 */
const BUSY_PROBES_PER_HOUR = 3;

/**
 * How long a 409 is waited out: as long as this site's exports usually take, and at least
 * 60 / BUSY_PROBES_PER_HOUR minutes.
 */
export function busyWaitMs(status: Status): number {
  return Math.max(HOUR_MS / BUSY_PROBES_PER_HOUR, medianExportMs(status) ?? 0);
}

type ExportRecord = NonNullable<Status['export']>;

/**
 * The export this release takes part in from now on, started or joined, recorded as its own for
 * its spec generation: any start mark or wait goes, and the requests it answers count as handled.
 */
export function withExport(
  release: StaticExportRelease,
  status: Status,
  exp: Pick<ExportRecord, 'jobId' | 'state' | 'startedAt'> &
    Pick<ExportRecord, 'progress' | 'joined' | 'projectId' | 'revision'>,
): Status {
  const { start: _, waiting: __, ...base } = status;
  const generation = release.metadata.generation;
  return {
    ...base,
    export: { ...exp, ...(generation === undefined ? {} : { generation }) },
    ...requestsOf(release),
  };
}

/**
 * Right after the export job started: record its id (and, in the current export API, its project)
 * first of all (crash safety); the mark goes.
 */
export function afterStart({ release, now }: Snapshot, jobId: string, state: string): Folded {
  const status = withExport(release, release.status ?? {}, {
    jobId,
    state,
    progress: 0,
    startedAt: now.toISOString(),
    ...startedRevision(release.spec),
  });
  // A start of the current export API is among status.recentStarts since its mark (see `start`).
  return {
    status,
    events: [
      {
        type: 'Normal',
        reason: 'ExportStarted',
        note: `Started export job ${jobId} for ${siteName(release.spec)}`,
      },
    ],
  };
}

/**
 * The platform answered 409 (a job of the deployment is active that no release here recorded):
 * nothing was started, so the mark goes; the release waits it out, then starts once more.
 */
export function afterStartBusy({ release, now }: Snapshot, waitMs: number): Folded {
  const { start: _, ...status } = release.status ?? {};
  const until = new Date(now.getTime() + waitMs).toISOString();
  const since = status.waiting?.reason === 'ExportBusy' ? status.waiting.since : now.toISOString();
  const message = `The platform is busy with an export job of ${siteName(release.spec)} that this release did not start (the dashboard, another cluster, or an earlier start whose answer was lost): one job per deployment may be active (409). Starting once more at ${until}, when this site's exports usually end`;
  return {
    status: { ...status, waiting: { reason: 'ExportBusy', since, until, message } },
    events: [{ type: 'Normal', reason: 'ExportBusy', note: message }],
  };
}

/**
 * The platform refused the start (429): nothing was started, so the mark goes; the group's budget
 * is blocked until `until` and the release waits for its slot.
 */
export function afterStartRefused({ release, now }: Snapshot, until: number): Folded {
  const { start: _, ...status } = release.status ?? {};
  const at = new Date(until).toISOString();
  const message = `The platform refused the export start: more than ${EXPORT_STARTS_PER_HOUR} starts per organization in the last hour (429). No release of the start budget group starts before ${at}`;
  const since = status.waiting?.reason === 'WaitingForStartBudget' ? status.waiting.since : now.toISOString();
  return {
    status: {
      ...status,
      waiting: { reason: 'WaitingForStartBudget', since, until: at, refusedUntil: at, message },
    },
    events: [{ type: 'Warning', reason: 'RateLimited', note: message }],
  };
}

/**
 * The start call failed: if it may have reached the platform the mark stays (the next reconcile
 * reports StartOutcomeUnknown and waits); if it certainly did not, the mark goes, and so does the
 * start recorded with it (nothing was sent: the budget must not count it).
 */
export function afterStartFailed(status: Status, mayHaveStarted: boolean): Status {
  if (mayHaveStarted) return status;
  const { start, ...rest } = status;
  if (start === undefined || !rest.recentStarts) return rest;
  return { ...rest, recentStarts: withoutRecordedStart(rest.recentStarts, start.since) };
}
