// An AgentJob's conditions, derived at commit from the status about to be written and the failure
// it records (Ready, and kstatus' Reconciling and Stalled).
import type { AgentJob } from '../../crd/index.ts';
import type { ConditionReason } from '../../crd/reasons.ts';
import { type Progress, progressConditions } from '../../runtime/conditions.ts';
import { withConditions } from '../documented-conditions.ts';
import { type Failure, failureConditions } from '../failures.ts';
import { CREATING, isFinal, type Status, seen } from './agent-job-model.ts';
import { outcomeUnknown } from './job-creation.ts';

const running = (status: Status): Progress<ConditionReason> => ({
  reason: 'Running',
  message: `Agent job ${status.jobId} is ${status.state}`,
});

/** What is still under way despite a failure (kstatus: Reconciling): a job waiting for budget or running. */
function reconcilingDespite(status: Status, f: Failure): Progress<ConditionReason> | undefined {
  if (f.reason === 'WaitingForBudget') return { reason: f.reason, message: f.message };
  return status.jobId && !isFinal(status.state) ? running(status) : undefined;
}

const creatingNow: Progress<ConditionReason> = { reason: CREATING, message: 'Creating the agent job' };

/** Ready of a finished job: its pull request, or why there is none. */
export function finishedReady(status: Status): {
  reason: 'AgentFailed' | 'Archived' | 'Completed';
  message: string;
} {
  const state = status.state ?? '';
  if (state === 'failed') return { reason: 'AgentFailed', message: `Agent job ${status.jobId} failed` };
  return {
    reason: state === 'archived' ? 'Archived' : 'Completed',
    message: status.prLink
      ? `Pull request: ${status.prLink}`
      : `Agent job ${status.jobId} is ${state}; no file was changed`,
  };
}

/**
 * The conditions of a status about to be written (at commit, for every write): a failure's, a
 * create under way or in doubt, a finished job's, or a running one's. Being deleted: untouched.
 */
export function jobConditions(job: AgentJob, status: Status, f: Failure | undefined, now: Date): Status {
  const gen = job.metadata.generation;
  if (job.metadata.deletionTimestamp) return status;
  const withFailure = (failure: Failure) =>
    withConditions(
      seen(status, gen),
      failureConditions(failure, reconcilingDespite(status, failure)),
      gen,
      now,
    );
  if (f) return withFailure(f);
  if (!status.jobId && status.creation) {
    if (status.creation.phase !== CREATING) return withFailure(outcomeUnknown);
    return withConditions<Status>(
      seen(status, gen),
      [
        { type: 'Ready', status: 'False', ...creatingNow },
        ...progressConditions({ reconciling: creatingNow }),
      ],
      gen,
      now,
    );
  }
  if (!status.jobId) return status;
  if (isFinal(status.state)) {
    const ready = finishedReady(status);
    if (ready.reason === 'AgentFailed') return withFailure({ ...ready, reason: ready.reason, stalled: true });
    return withConditions(
      seen(status, gen),
      [{ type: 'Ready', status: 'True', ...ready }, ...progressConditions<ConditionReason>({})],
      gen,
      now,
    );
  }
  const r = running(status);
  const ready = { type: 'Ready', status: 'False', ...r } as const;
  return withConditions(seen(status, gen), [ready, ...progressConditions({ reconciling: r })], gen, now);
}
