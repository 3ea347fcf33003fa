// Folding the outcome of a start call back into status (pure).
import type { StaticExportRelease } from '../../crd/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../project.ts';
import { siteName, startedProject } from './export-site.ts';
import type { Folded, Snapshot, Status } from './model.ts';
import { requestsOf } from './start-reason.ts';

type ExportRecord = NonNullable<Status['export']>;

const HOUR_MS = 3_600_000;

/**
 * The export this release takes part in from now on, started or joined, recorded as its own for
 * its spec generation: any start mark or wait goes, and the requests it answers count as handled.
 */
export function withExport(
  release: StaticExportRelease,
  status: Status,
  exp: Pick<ExportRecord, 'jobId' | 'state' | 'startedAt'> &
    Pick<ExportRecord, 'progress' | 'joined' | 'projectId'>,
): Status {
  const { start: _, waiting: __, ...base } = status;
  const generation = release.metadata.generation;
  return {
    ...base,
    export: { ...exp, ...(generation === undefined ? {} : { generation }) },
    ...requestsOf(release),
  };
}

/** The starts of the last hour, newest first: what a restarted operator counts against the budget. */
function withStart(recent: readonly string[] | undefined, now: Date): string[] {
  const cutoff = now.getTime() - HOUR_MS;
  return [now.toISOString(), ...(recent ?? []).filter((at) => Date.parse(at) > cutoff)].slice(
    0,
    EXPORT_STARTS_PER_HOUR,
  );
}

/**
 * Right after the export job started: record its id (and, in the current export API, its project
 * and the start's time) first of all (crash safety); the mark goes.
 */
export function afterStart({ release, now }: Snapshot, jobId: string, state: string): Folded {
  const status = withExport(release, release.status ?? {}, {
    jobId,
    state,
    progress: 0,
    startedAt: now.toISOString(),
    ...startedProject(release.spec),
  });
  return {
    status:
      release.spec.projectId === undefined
        ? status
        : { ...status, recentStarts: withStart(status.recentStarts, now) },
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
    status: { ...status, waiting: { reason: 'WaitingForStartBudget', since, until: at, message } },
    events: [{ type: 'Warning', reason: 'RateLimited', note: message }],
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
