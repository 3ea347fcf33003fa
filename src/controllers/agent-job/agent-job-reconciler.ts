// observe -> decide -> act for one AgentJob, on the shared skeleton. decide-agent-job.ts decides
// (its rules in job-guards.ts, job-creation.ts and job-polling.ts); the action table
// (agent-job-actions.ts) performs the action; agent-job-conditions.ts derives the conditions.
import { AGENT_JOB_FINAL_STATUSES } from '../../api/index.ts';
import { type AgentJob, AJ_PLURAL, agentJobSpecSchema, GROUP_VERSION } from '../../crd/index.ts';
import type { Failure } from '../failures.ts';
import { type Loaded, pollJob, Reconciler, type ReconcilerDeps } from '../reconciler-base.ts';
import { type AgentJobActions, agentJobActions } from './agent-job-actions.ts';
import { jobConditions } from './agent-job-conditions.ts';
import type { Action, Decision, Observed, Status } from './agent-job-model.ts';
import { choose } from './decide-agent-job.ts';

export interface AgentJobReconcilerOptions extends ReconcilerDeps {
  /** Resolves once the shared budget counts the jobs created before this process started. */
  budgetSeeded?: Promise<void>;
}

export class AgentJobReconciler extends Reconciler<AgentJob, Status, Observed, Action> {
  private readonly o: AgentJobReconcilerOptions;
  protected readonly actions: AgentJobActions = agentJobActions;

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

  /** Names the rule that chose (the skeleton logs it). */
  protected decide(observed: Observed): Decision {
    const { rule, decision } = choose(observed);
    return { ...decision, rule };
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
