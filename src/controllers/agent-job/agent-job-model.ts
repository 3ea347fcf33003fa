// What an AgentJob's decision reads and returns (the case its rules read, the one action it can
// name), and what the creation, the polling and the conditions share of its status.
import {
  type AdminApiClient,
  AGENT_JOB_FINAL_STATUSES,
  type AgentJob as ApiAgentJob,
} from '../../api/index.ts';
import type { AgentJob, AgentJobStatus } from '../../crd/index.ts';
import type { ConditionReason } from '../../crd/reasons.ts';
import type { Decision as DecisionOf } from '../decision-shape.ts';
import type { Failure } from '../failures.ts';
import type { JobPoll as Poll } from '../types.ts';

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

export type Action = { kind: 'none' } | { kind: 'create' };
export type Decision = DecisionOf<Action, Status>;

/** What the rules read: the observations, and the status with a reconcile request counted as handled. */
export interface JobCase {
  o: Observed;
  status: Status;
}

/** `status.creation`'s phase while the create call may be under way. */
export const CREATING = 'Creating' satisfies ConditionReason;
export const OUTCOME_UNKNOWN = 'CreateOutcomeUnknown' satisfies ConditionReason;

export const isFinal = (state: string | undefined) =>
  state !== undefined && AGENT_JOB_FINAL_STATUSES.has(state);

/** The status with the spec's generation seen (when the object has one). */
export const seen = (status: Status, gen: number | undefined): Status =>
  gen === undefined ? status : { ...status, observedGeneration: gen };

/** The status recording what the platform says of the job (after its creation, and at each poll). */
export function withRemote(status: Status, job: RemoteJob): Status {
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
