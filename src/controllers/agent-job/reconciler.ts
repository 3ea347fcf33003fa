// observe -> decide -> act for one AgentJob. Effects only; decisions live in decide.ts.
import {
  type AdminApiClient,
  AGENT_JOB_FINAL_STATUSES,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from '../../api/index.ts';
import { type AgentJob, AJ_PLURAL, agentJobSpecSchema, GROUP_VERSION } from '../../crd/index.ts';
import type { Logger } from '../../log.ts';
import { isNotFound, type KubeClient, resourcePath } from '../../runtime/kube-client.ts';
import { type ApiClients, readCredentials } from '../credentials.ts';
import { emitEvents, writeStatus } from '../effects.ts';
import {
  afterFailure,
  classifyError,
  type Failure,
  failure,
  failureEvent,
  invalidSpec,
  nextStep,
} from '../failures.ts';
import type { EventSink, ReconcileResult } from '../types.ts';
import {
  afterCreate,
  type Decision,
  decide,
  type EventNote,
  type JobPoll,
  type Observed,
  OUTCOME_UNKNOWN,
  type RemoteJob,
  type Status,
  waitingForBudget,
  withFailure,
} from './decide.ts';

export interface AgentJobReconcilerOptions {
  kube: KubeClient;
  clients: ApiClients;
  events: EventSink;
  logger: Logger;
  now?: () => Date;
  /** Resolves once the shared budget counts the jobs created before this process started. */
  budgetSeeded?: Promise<void>;
}

const jobPath = (ns: string, name?: string) => resourcePath(GROUP_VERSION, AJ_PLURAL, ns, name);

export class AgentJobReconciler {
  private readonly o: AgentJobReconcilerOptions;

  constructor(options: AgentJobReconcilerOptions) {
    this.o = options;
  }

  /** `signal` aborts polls when the operator stops leading; a create is never cut short. */
  async reconcile(namespace: string, name: string, signal?: AbortSignal): Promise<ReconcileResult> {
    let job: AgentJob;
    try {
      job = await this.o.kube.get<AgentJob>(jobPath(namespace, name));
    } catch (e) {
      if (isNotFound(e)) return {};
      throw e;
    }
    const { observed, client } = await this.observe(job, signal);
    const decision = decide(observed);
    return this.act(observed, decision, client);
  }

  private async observe(
    job: AgentJob,
    signal: AbortSignal | undefined,
  ): Promise<{ observed: Observed; client?: AdminApiClient }> {
    const now = (this.o.now ?? (() => new Date()))();
    const base = { now, job, budgetDelayMs: 0 };
    const spec = agentJobSpecSchema.safeParse(job.spec);
    if (!spec.success) {
      return { observed: { ...base, blocked: invalidSpec(spec.error) } };
    }
    job = { ...job, spec: spec.data };
    const finished = job.status?.jobId && AGENT_JOB_FINAL_STATUSES.has(job.status.state ?? '');
    if (job.metadata.deletionTimestamp || finished) return { observed: { ...base, job } };
    const creds = await readCredentials(this.o.kube, job, this.o.clients.defaults);
    if ('failure' in creds) return { observed: { ...base, job, blocked: creds.failure } };
    const client = this.o.clients.get(creds);
    if (!job.status?.jobId) await this.o.budgetSeeded;
    const observed: Observed = {
      ...base,
      job,
      budgetDelayMs: this.o.clients.budget.delayMs(job.spec.projectId),
    };
    if (job.status?.jobId) observed.poll = await this.poll(client, job, job.status.jobId, signal);
    return { observed, client };
  }

  private async poll(
    client: AdminApiClient,
    job: AgentJob,
    id: string,
    signal: AbortSignal | undefined,
  ): Promise<JobPoll> {
    try {
      return { kind: 'job', job: await client.getAgentJob(job.spec.projectId, id, { signal }) };
    } catch (e) {
      if (signal?.aborted) throw e;
      if (e instanceof NotFoundError) return { kind: 'notFound' };
      return { kind: 'failed', failure: classifyError(e, secretRefText(job)) };
    }
  }

  private async act(o: Observed, d: Decision, client: AdminApiClient | undefined): Promise<ReconcileResult> {
    // Not `Creating` while the per-minute limit would hold the call: a crash while waiting would
    // leave an outcome to check by hand for a job that was never sent.
    const slotInMs = d.action.kind === 'create' ? (client?.requestDelayMs() ?? 0) : 0;
    if (slotInMs > 0) return { requeueAfterMs: slotInMs };
    await this.emit(o.job, d.events);
    await this.writeStatus(o.job, d.status);
    if (d.action.kind === 'none' || !client) return nextStep(d);

    // `Creating` is stored (above) before this call: a crash from here on never creates twice.
    let created: RemoteJob;
    try {
      created = await client.createAgentJob(o.job.spec.projectId, o.job.spec.prompt);
    } catch (e) {
      const f = createFailure(e, o.job, o.now);
      await this.writeStatus(
        { ...o.job, status: d.status },
        withFailure(d.status, f, o.job.metadata.generation, o.now),
      );
      await this.emit(o.job, [failureEvent(f)]);
      return afterFailure(f);
    }
    const next = afterCreate(o, d.status, created);
    await this.writeStatus({ ...o.job, status: d.status }, next.status);
    await this.emit(o.job, next.events);
    return { requeueAfterMs: 2_000 };
  }

  private writeStatus(obj: AgentJob, status: Status): Promise<void> {
    return writeStatus(this.o.kube, AJ_PLURAL, obj, status);
  }

  private emit(obj: AgentJob, events: EventNote[]): Promise<void> {
    return emitEvents(this.o.events, obj, events);
  }
}

/** A failed create is retried only when the server certainly created nothing. */
export function createFailure(error: unknown, job: AgentJob, now: Date): Failure {
  // Our budget or the server's 429: the client has blocked the project's shared budget until then.
  if (error instanceof RateLimitedError) {
    return waitingForBudget(job.spec.projectId, error.retryAfterMs ?? 60_000, now);
  }
  const mayHaveReachedServer =
    ((error instanceof NetworkError || error instanceof TimeoutError) && !error.beforeRequestSent) ||
    (error instanceof ServerError && ![502, 503, 504].includes(error.status ?? 0));
  if (mayHaveReachedServer) {
    return failure(
      OUTCOME_UNKNOWN,
      `The create call got no usable answer (${error instanceof Error ? error.message : String(error)}); ` +
        'the job may exist: check the dashboard, then delete and re-create this AgentJob to try again',
      true,
    );
  }
  return classifyError(error, secretRefText(job));
}

function secretRefText(job: AgentJob): string {
  const ref = job.spec.credentialsSecretRef;
  return `${job.metadata.namespace}/${ref.name} (key ${ref.key})`;
}
