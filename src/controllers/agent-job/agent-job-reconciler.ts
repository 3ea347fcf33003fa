// observe -> decide -> act for one AgentJob, on the shared skeleton. Effects only; decisions live
// in decide-agent-job.ts.
import { AGENT_JOB_FINAL_STATUSES, RateLimitedError } from '../../api/index.ts';
import { type AgentJob, AJ_PLURAL, agentJobSpecSchema, GROUP_VERSION } from '../../crd/index.ts';
import { secretRefText } from '../credentials.ts';
import { classifyError, type Failure, failure, mayHaveReachedServer } from '../failures.ts';
import {
  type ActionTable,
  type Loaded,
  pollJob,
  Reconciler,
  type ReconcilerDeps,
  type Run,
} from '../reconciler-base.ts';
import type { ReconcileResult } from '../types.ts';
import {
  type Action,
  afterCreate,
  afterCreateFailed,
  type Decision,
  decide,
  jobConditions,
  type Observed,
  OUTCOME_UNKNOWN,
  type RemoteJob,
  type Status,
  waitingForBudget,
} from './decide-agent-job.ts';

export interface AgentJobReconcilerOptions extends ReconcilerDeps {
  /** Resolves once the shared budget counts the jobs created before this process started. */
  budgetSeeded?: Promise<void>;
}

export class AgentJobReconciler extends Reconciler<AgentJob, Status, Observed, Action> {
  private readonly o: AgentJobReconcilerOptions;
  protected readonly actions: ActionTable<Observed, Action, AgentJob, Status> = {
    // `status.creation` is stored (by the skeleton, as a compare-and-swap) before this call: a crash
    // or a second operator from here on never creates twice.
    create: { run: (o, _, run) => create(o, run), atMostOnce: true },
  };

  constructor(options: AgentJobReconcilerOptions) {
    super(options, {
      apiVersion: GROUP_VERSION,
      plural: AJ_PLURAL,
      specSchema: agentJobSpecSchema,
      logKey: 'agentJob',
    });
    this.o = options;
  }

  protected callsApi(job: AgentJob): boolean {
    const finished = job.status?.jobId && AGENT_JOB_FINAL_STATUSES.has(job.status.state ?? '');
    return !job.metadata.deletionTimestamp && !finished;
  }

  protected decide(observed: Observed): Decision {
    return decide(observed);
  }

  protected conditions(job: AgentJob, status: Status, f: Failure | undefined, now: Date): Status {
    return jobConditions(job, status, f, now);
  }

  protected async observe(
    { now, obj: job, blocked, client }: Loaded<AgentJob>,
    signal: AbortSignal | undefined,
  ): Promise<Observed> {
    const base = { now, job, budgetDelayMs: 0 };
    if (blocked) return { ...base, blocked };
    if (!client) return base;
    const jobId = job.status?.jobId;
    if (!jobId) await this.o.budgetSeeded;
    const observed: Observed = {
      ...base,
      client,
      budgetDelayMs: this.o.clients.budget.delayMs(job.spec.projectId),
    };
    if (jobId) {
      observed.poll = await pollJob(
        job,
        () => client.getAgentJob(job.spec.projectId, jobId, { signal }),
        signal,
      );
    }
    return observed;
  }
}

/** Creates the agent job; its id is recorded first thing after the answer. */
async function create(o: Observed, run: Run<AgentJob, Status>): Promise<ReconcileResult> {
  // The skeleton runs it only with the client the job's credentials gave.
  const { client } = o;
  if (!client) return {};
  let created: RemoteJob;
  try {
    // Aborted (deleted, or another replica leads) even once sent: the mark stays, so a create
    // cut short becomes CreateOutcomeUnknown, never a second job.
    created = await client.createAgentJob(
      o.job.spec.projectId,
      o.job.spec.prompt,
      run.signal ? { signal: run.signal } : {},
    );
  } catch (e) {
    if (run.signal?.aborted) throw e;
    const f = createFailure(e, o.job, o.now);
    return run.fail(afterCreateFailed(run.record.status, f), f, e);
  }
  await run.commit(afterCreate(run.record.status, created));
  return { requeueAfterMs: 2_000 };
}

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
