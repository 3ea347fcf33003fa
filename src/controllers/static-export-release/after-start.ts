// Folding the outcome of a start call back into status (pure).
import type { StaticExportRelease } from '../../crd/index.ts';
import type { Folded, Snapshot, Status } from './model.ts';
import { requestsOf } from './start-reason.ts';

type ExportRecord = NonNullable<Status['export']>;

/**
 * The export this release takes part in from now on, started or joined, recorded as its own for
 * its spec generation: any start mark goes, and the requests it answers count as handled.
 */
export function withExport(
  release: StaticExportRelease,
  status: Status,
  exp: Pick<ExportRecord, 'jobId' | 'state' | 'startedAt'> & Pick<ExportRecord, 'progress' | 'joined'>,
): Status {
  const { start: _, ...base } = status;
  const generation = release.metadata.generation;
  return {
    ...base,
    export: { ...exp, ...(generation === undefined ? {} : { generation }) },
    ...requestsOf(release),
  };
}

/** Right after the export job started: record its id first of all (crash safety); the mark goes. */
export function afterStart({ release, now }: Snapshot, jobId: string, state: string): Folded {
  return {
    status: withExport(release, release.status ?? {}, {
      jobId,
      state,
      progress: 0,
      startedAt: now.toISOString(),
    }),
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
