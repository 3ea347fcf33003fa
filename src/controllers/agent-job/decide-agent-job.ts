// What an AgentJob needs next, as a pure function of what was observed. Creation is at most once:
// `status.creation` says `Creating` before the create call (written only if the object did not
// change since it was read), so a crash, a lost answer or a second operator never leads to a second
// job (and a second pull request); it becomes CreateOutcomeUnknown for a human instead.
import {
  type AdminApiClient,
  AGENT_JOB_FINAL_STATUSES,
  type AgentJob as ApiAgentJob,
} from '../../api/index.ts';
import { type AgentJob, type AgentJobStatus, RECONCILE_REQUEST_ANNOTATION } from '../../crd/index.ts';
import type { ConditionReason } from '../../crd/reasons.ts';
import { type Progress, progressConditions } from '../../runtime/conditions.ts';
import { type Decision as DecisionOf, failed, none } from '../decision-shape.ts';
import { withConditions } from '../documented-conditions.ts';
import { type Failure, failureConditions, failureEvent } from '../failures.ts';
import type { EventNote, JobPoll as Poll } from '../types.ts';

export type Status = AgentJobStatus;

/** The platform's view of the job, as the API client parsed it. */
export type RemoteJob = ApiAgentJob;

export type JobPoll = Poll<RemoteJob>;

export interface Observed {
  now: Date;
  job: AgentJob;
  blocked?: Failure;
  /** The project's admin API client, while the job calls the API and its credentials are usable (decide never calls it). */
  client?: AdminApiClient;
  /** Milliseconds until the project's shared creation budget allows one more job (0: now). */
  budgetDelayMs: number;
  poll?: JobPoll;
}

export type { EventNote };

export type Action = { kind: 'none' } | { kind: 'create' };
export type Decision = DecisionOf<Action, Status>;

const CREATING = 'Creating' satisfies ConditionReason;
export const OUTCOME_UNKNOWN = 'CreateOutcomeUnknown' satisfies ConditionReason;

const isFinal = (state: string | undefined) => state !== undefined && AGENT_JOB_FINAL_STATUSES.has(state);

/** Over the project's shared hourly budget (ours or the server's 429): the job waits, it does not fail. */
export function waitingForBudget(projectId: string, delayMs: number, now: Date): Failure {
  return {
    reason: 'WaitingForBudget',
    message: `Project ${projectId} has reached its hourly limit of agent jobs; this job will be created at ${new Date(now.getTime() + delayMs).toISOString()}`,
    stalled: false,
    retryAfterMs: delayMs,
  };
}

const seen = (status: Status, gen: number | undefined): Status =>
  gen === undefined ? status : { ...status, observedGeneration: gen };

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

/** A create sent without an answer: nothing is created again, a human looks. */
const outcomeUnknown: Failure = {
  reason: OUTCOME_UNKNOWN,
  message:
    'The operator did not learn whether the agent job was created (it stopped or lost the connection during the call). ' +
    'It will not create another one: check the dashboard, then delete and re-create this AgentJob to try again',
  stalled: true,
};

/** Ready of a finished job: its pull request, or why there is none. */
function finished(status: Status): { reason: 'AgentFailed' | 'Archived' | 'Completed'; message: string } {
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
    const ready = finished(status);
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

/** Flux's request annotation: any reconcile polls the job, so its value counts as handled at once. */
function handledRequest(job: AgentJob): Pick<Status, 'lastHandledReconcileAt'> {
  const requested = job.metadata.annotations?.[RECONCILE_REQUEST_ANNOTATION];
  return requested === undefined ? {} : { lastHandledReconcileAt: requested };
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

/** Poll soon after creation, then back off: agents take minutes. */
export function agentPollIntervalMs(createdAt: string | undefined, now: Date): number {
  const age = createdAt ? now.getTime() - Date.parse(createdAt) : 0;
  if (age < 30_000) return 2_000;
  if (age < 2 * 60_000) return 5_000;
  if (age < 10 * 60_000) return 15_000;
  return 30_000;
}

function fromRemote(status: Status, job: RemoteJob): Status {
  return {
    ...status,
    jobId: job.id,
    state: job.status,
    ...(job.prLink ? { prLink: job.prLink } : {}),
    ...(job.model ? { model: job.model } : {}),
    ...(job.source
      ? {
          source: {
            ...(job.source.repository ? { repository: job.source.repository } : {}),
            ...(job.source.ref ? { ref: job.source.ref } : {}),
          },
        }
      : {}),
    ...(job.createdAt ? { createdAt: job.createdAt } : {}),
    ...(job.archivedAt ? { archivedAt: job.archivedAt } : {}),
  };
}

export function decide(o: Observed): Decision {
  const { job, now } = o;
  const gen = job.metadata.generation;
  const status: Status = { ...job.status, ...handledRequest(job) };

  if (job.metadata.deletionTimestamp) return none(job.status ?? {});
  // Done: only a spec change (e.g. another key Secret) is seen, so kstatus does not wait on it.
  if (status.jobId && isFinal(status.state)) return none(seen(status, gen));

  // First of all, whatever else is wrong now: a create that may have been sent is never repeated.
  const creation = status.creation;
  if (!status.jobId && creation) {
    return {
      ...none({ ...status, creation: { ...creation, phase: 'OutcomeUnknown' } }),
      events: creation.phase === 'Creating' ? [failureEvent(outcomeUnknown)] : [],
      failure: outcomeUnknown,
    };
  }

  if (o.blocked) return failed(status, o.blocked);

  if (!status.jobId) {
    if (o.budgetDelayMs > 0) {
      const waiting = none(status, o.budgetDelayMs);
      const f = waitingForBudget(job.spec.projectId, o.budgetDelayMs, now);
      return { ...waiting, failure: { ...f, retryAfterMs: waiting.requeueAfterMs } };
    }
    const creating = seen({ ...status, creation: { phase: CREATING, since: now.toISOString() } }, gen);
    return { action: { kind: 'create' }, status: creating, events: [] };
  }

  const poll = o.poll;
  if (!poll) return none(status, agentPollIntervalMs(status.createdAt, now));
  if (poll.kind === 'failed') return failed(status, poll.failure);
  if (poll.kind === 'notFound') {
    const f: Failure = {
      reason: 'JobNotFound',
      message: `Agent job ${status.jobId} no longer exists on the platform`,
      stalled: true,
    };
    return failed(status, f);
  }
  const next = fromRemote(status, poll.job);
  if (isFinal(next.state)) {
    const ready = finished(next);
    return none(next, undefined, [
      { type: next.state === 'failed' ? 'Warning' : 'Normal', reason: ready.reason, note: ready.message },
    ]);
  }
  return none(next, agentPollIntervalMs(next.createdAt, now));
}

/** Right after the create call answered: the job id first of all; the `Creating` mark goes. */
export function afterCreate(status: Status, job: RemoteJob): { status: Status; events: EventNote[] } {
  const { creation: _, ...rest } = status;
  return {
    status: fromRemote(rest, job),
    events: [{ type: 'Normal', reason: 'Created', note: `Created agent job ${job.id}` }],
  };
}
