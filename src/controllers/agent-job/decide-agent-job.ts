// What an AgentJob needs next, as a pure function of what was observed: the status is read with a
// reconcile request counted as handled, then the first rule of the ladder that applies decides,
// else `settle` (followJob: the job as polled is recorded). The rules' order is the behaviour:
// test/unit/controllers/agent-job/decide-agent-job.test.ts pins it.
import { RECONCILE_REQUEST_ANNOTATION } from '../../crd/index.ts';
import { type Chosen, ladder, type Rule } from '../rule-ladder.ts';
import type { Decision, JobCase, Observed, Status } from './agent-job-model.ts';
import { createJob, createOutcomeUnknown, waitForBudget } from './job-creation.ts';
import { blocked, deleting } from './job-guards.ts';
import { followJob, jobFinished, jobNotFound, pollFailed } from './job-polling.ts';

/**
 * Deleted or finished, nothing more; a create in doubt is never repeated, whatever else is wrong
 * (it comes before a problem found); a job is created once the budget allows; a job that exists is
 * followed.
 */
export const AGENT_JOB_RULES: readonly Rule<JobCase, Decision>[] = [
  deleting,
  jobFinished,
  createOutcomeUnknown,
  blocked,
  waitForBudget,
  createJob,
  pollFailed,
  jobNotFound,
];

/** Flux's request annotation: any reconcile polls the job, so its value counts as handled at once. */
function handledRequest(o: Observed): Pick<Status, 'lastHandledReconcileAt'> {
  const requested = o.job.metadata.annotations?.[RECONCILE_REQUEST_ANNOTATION];
  return requested === undefined ? {} : { lastHandledReconcileAt: requested };
}

export function decide(o: Observed): Decision {
  return choose(o).decision;
}

/** The decision and the rule that chose it. */
export function choose(o: Observed): Chosen<Decision> {
  return ladder(AGENT_JOB_RULES, { o, status: { ...o.job.status, ...handledRequest(o) } }, followJob);
}
