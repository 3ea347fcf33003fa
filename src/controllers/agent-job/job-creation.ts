// Creating the agent job, at most once: `status.creation` says `Creating` before the create call
// (written only if the object did not change since it was read), so a crash, a lost answer or a
// second operator never leads to a second job (and a second pull request); it becomes
// CreateOutcomeUnknown for a human instead. Its rules, the create call's outcome and its fold.
import { RateLimitedError } from '../../api/index.ts';
import type { AgentJob } from '../../crd/index.ts';
import { secretRefText } from '../credentials.ts';
import { none } from '../decision-shape.ts';
import { classifyError, type Failure, failure, failureEvent, mayHaveReachedServer } from '../failures.ts';
import { type Rule, rule } from '../rule-ladder.ts';
import type { EventNote } from '../types.ts';
import {
  CREATING,
  type Decision,
  type JobCase,
  OUTCOME_UNKNOWN,
  type RemoteJob,
  type Status,
  seen,
  withRemote,
} from './agent-job-model.ts';

/** Over the project's shared hourly budget (ours or the server's 429): the job waits, it does not fail. */
export function waitingForBudget(projectId: string, delayMs: number, now: Date): Failure {
  return {
    reason: 'WaitingForBudget',
    message: `Project ${projectId} has reached its hourly limit of agent jobs; this job will be created at ${new Date(now.getTime() + delayMs).toISOString()}`,
    stalled: false,
    retryAfterMs: delayMs,
  };
}

/** A create sent without an answer: nothing is created again, a human looks. */
export const outcomeUnknown: Failure = {
  reason: OUTCOME_UNKNOWN,
  message:
    'The operator did not learn whether the agent job was created (it stopped or lost the connection during the call). ' +
    'It will not create another one: check the dashboard, then delete and re-create this AgentJob to try again',
  stalled: true,
};

/**
 * First of all, whatever else is wrong now: a create that may have been sent (a mark without a job
 * id) is never repeated. Told once, when first found.
 */
export const createOutcomeUnknown: Rule<JobCase, Decision> = rule('createOutcomeUnknown', ({ status }) => {
  const { creation } = status;
  if (status.jobId || !creation) return undefined;
  return {
    ...none({ ...status, creation: { ...creation, phase: 'OutcomeUnknown' } }),
    events: creation.phase === CREATING ? [failureEvent(outcomeUnknown)] : [],
    failure: outcomeUnknown,
  };
});

/** No job yet and the project's shared budget is used up: it waits for the slot, it does not fail. */
export const waitForBudget: Rule<JobCase, Decision> = rule('waitForBudget', ({ o, status }) => {
  if (status.jobId || o.budgetDelayMs <= 0) return undefined;
  const waiting = none(status, o.budgetDelayMs);
  const f = waitingForBudget(o.job.spec.projectId, o.budgetDelayMs, o.now);
  return { ...waiting, failure: { ...f, retryAfterMs: waiting.requeueAfterMs } };
});

/** No job yet: marked `Creating` (stored by compare-and-swap before the call), then created. */
export const createJob: Rule<JobCase, Decision> = rule('createJob', ({ o, status }) => {
  if (status.jobId) return undefined;
  const creating = seen(
    { ...status, creation: { phase: CREATING, since: o.now.toISOString() } },
    o.job.metadata.generation,
  );
  return { action: { kind: 'create' }, status: creating, events: [] };
});

/** What the create call gave: the job, or the error it failed with. */
export type CreateOutcome = { kind: 'created'; job: RemoteJob } | { kind: 'failed'; error: unknown };

/**
 * The create call's outcome folded into the status: the job recorded with its Created event, or
 * the failure to record on top of the status (its Warning is the failure's own) and its cause, for
 * the log.
 */
export type CreateFolded =
  | { status: Status; events: EventNote[] }
  | { status: Status; failure: Failure; cause: unknown };

/** A failed create is retried only when the server certainly created nothing. */
export function createFailure(error: unknown, job: AgentJob, now: Date): Failure {
  // Our budget or the server's 429: the client has blocked the project's shared budget until then.
  if (error instanceof RateLimitedError) {
    return waitingForBudget(job.spec.projectId, error.retryAfterMs ?? 60_000, now);
  }
  if (mayHaveReachedServer(error)) {
    return failure(
      OUTCOME_UNKNOWN,
      `The create call got no usable answer (${error instanceof Error ? error.message : String(error)}); ` +
        'the job may exist: check the dashboard, then delete and re-create this AgentJob to try again',
      true,
    );
  }
  return classifyError(error, secretRefText(job));
}

/**
 * The create call failed with `f`: if it may have reached the platform the mark stays (as
 * OutcomeUnknown) and nothing is created again; if it certainly did not, the mark goes and the
 * create is retried by `f`'s rule.
 */
export function afterCreateFailed(status: Status, f: Failure): Status {
  const { creation, ...rest } = status;
  return f.reason === OUTCOME_UNKNOWN && creation
    ? { ...status, creation: { ...creation, phase: 'OutcomeUnknown' } }
    : rest;
}

/** Right after the create call answered: the job id first of all; the `Creating` mark goes. */
export function afterCreate(status: Status, job: RemoteJob): { status: Status; events: EventNote[] } {
  const { creation: _, ...rest } = status;
  return {
    status: withRemote(rest, job),
    events: [{ type: 'Normal', reason: 'Created', note: `Created agent job ${job.id}` }],
  };
}

/** The create call's outcome for `job` (read at `now`), on top of the status written before it. */
export function afterCreateCall(
  job: AgentJob,
  now: Date,
  status: Status,
  outcome: CreateOutcome,
): CreateFolded {
  if (outcome.kind === 'created') return afterCreate(status, outcome.job);
  const f = createFailure(outcome.error, job, now);
  return { status: afterCreateFailed(status, f), failure: f, cause: outcome.error };
}
