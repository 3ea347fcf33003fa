// Folding the outcome of a start call back into status (pure).
import type { Folded, Snapshot, Status } from './model.ts';
import { requestsOf } from './start-reason.ts';

/** Right after the export job started: record its id first of all (crash safety); the mark goes. */
export function afterStart({ release, now }: Snapshot, jobId: string, state: string): Folded {
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
    status: s,
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
