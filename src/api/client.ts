// The production admin API client (contract: seeds/000, gaps: VENDOR-FACTS). One connection pool
// (src/http.ts) per client with connect/headers/body timeouts, plus an overall deadline per HTTP call.

import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { errorCode, HttpAgent, HttpTimeoutError, readText } from '../http.ts';
import type { Logger } from '../log.ts';
import { describeUrl, registerSecret } from '../redact.ts';
import { backoff, type Deadline, deadline, pause } from '../timers.ts';
import { AgentJobBudget } from './budget.ts';
import type { AdminApiCalls, CallOptions, CallSpec, RetryClass } from './call-spec.ts';
import {
  AdminApiError,
  ExportStartLimitError,
  InvalidResponseError,
  NetworkError,
  type Operation,
  RateLimitedError,
  TimeoutError,
} from './errors.ts';
import { generateBundle } from './export-revisions/contract-revision.ts';
import type {
  ExportJobRef,
  ExportRead,
  ExportStatus,
  ExportTarget,
  GeneratedBundle,
} from './export-revisions/export-revision.ts';
import { exportLink, readExport, startExport } from './export-revisions/revisions.ts';
import { httpError } from './http-errors.ts';
import { DEFAULT_KEY_PREFIX, validateAdminKey } from './keys.ts';
import { RequestLimiter, SENT_TO_PLATFORM_WINDOW_MS } from './request-limiter.ts';
import { type AgentJob, AgentJobSchema, type StartedExport } from './schemas.ts';

export interface AdminApiTimeouts {
  /** TCP/TLS connect. Default 10 s. */
  connectMs: number;
  /** Until response headers arrive. Default 30 s. */
  headersMs: number;
  /** Longest pause between body chunks. Default 30 s. */
  bodyMs: number;
  /** Overall deadline of one HTTP call, whatever it is waiting for. Default 60 s. */
  requestMs: number;
}

export interface RetryPolicy {
  /** Total tries per operation, the first included. Default 4. */
  attempts: number;
  /** Backoff base; the n-th retry waits a random time up to base * 2^(n-1). Default 500 ms. */
  baseDelayMs: number;
  /** Backoff cap. Default 20 s. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the error goes to the caller. Default 120 s. */
  maxRetryAfterMs: number;
}

export type CallStatus = number | 'network' | 'timeout';

export interface AdminApiClientOptions {
  /** e.g. `https://api.example.com`; a path prefix is kept. */
  baseUrl: string;
  apiKey: string;
  /** Vendor prefix of admin keys. Default `mint`. */
  keyPrefix?: string;
  logger?: Logger;
  timeouts?: Partial<AdminApiTimeouts>;
  retry?: Partial<RetryPolicy>;
  /** Shared budget of agent job creations; each client gets its own by default. */
  agentJobBudget?: AgentJobBudget;
  /** Path of get-agent-job (the contract does not show it). Placeholders `{projectId}` and `{id}`. */
  agentJobPath?: string;
  /**
   * Called after every HTTP attempt, for metrics. `endpoint` is the method and route template
   * (`GET /v1/static-export/jobs/{jobId}`): never a URL, which holds ids and the base URL.
   */
  onCall?: (operation: Operation, status: CallStatus, durationMs: number, endpoint: string) => void;
  /** Requests per minute this client sends at most (waiting for a slot); unlimited when absent. */
  requestsPerMinute?: number;
}

export interface CreateAgentJobOptions extends CallOptions {
  /** Wait for the client-side budget instead of failing with a client-side RateLimitedError. */
  waitForBudget?: boolean;
}

const DEFAULT_TIMEOUTS: AdminApiTimeouts = {
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  requestMs: 60_000,
};
const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 120_000,
};
const DEFAULT_AGENT_JOB_PATH = '/v2/agent/{projectId}/job/{id}';
const MAX_RESPONSE_BYTES = 1 << 20;
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * For a start answered 2xx or 5xx in a form the client cannot use: the job may exist all the same
 * (as `startMayHaveCreatedJob` decides).
 */
function unusableStartAdvice(spec: CallSpec<z.ZodType>, status: number): string {
  return spec.operation === 'startExport' && spec.answers && (status < 300 || status >= 500)
    ? ` ${spec.answers.mayHaveStarted}`
    : '';
}

/** A 2xx answer's status and parsed JSON body. */
interface Answer {
  status: number;
  json: unknown;
}

function seg(value: string): string {
  return encodeURIComponent(value);
}

export class AdminApiClient implements AdminApiCalls {
  readonly baseUrl: string;
  readonly budget: AgentJobBudget;
  private readonly origin: string;
  private readonly prefix: string;
  private readonly timeouts: AdminApiTimeouts;
  private readonly retryPolicy: RetryPolicy;
  private readonly logger: Logger | undefined;
  private readonly agentJobPath: string;
  private readonly onCall: AdminApiClientOptions['onCall'];
  private readonly agent: HttpAgent;
  private readonly limiter: RequestLimiter | undefined;
  private operations = 0;
  // A private field keeps the key out of anything that serializes the client (logs, inspectors).
  readonly #authorization: string;
  readonly #identity: string;

  constructor(options: AdminApiClientOptions) {
    const key = validateAdminKey(options.apiKey, options.keyPrefix ?? DEFAULT_KEY_PREFIX);
    registerSecret(key);
    this.#authorization = `Bearer ${key}`;
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new Error('The admin API base URL is not a valid URL (expected e.g. https://api.example.com)');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new Error(`The admin API base URL must use http or https, not ${url.protocol}`);
    }
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.baseUrl = `${this.origin}${this.prefix}`;
    this.#identity = createHash('sha256').update(`${this.baseUrl}\u0000${key}`).digest('hex');
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.retryPolicy = { ...DEFAULT_RETRY, ...options.retry };
    this.logger = options.logger;
    this.agentJobPath = options.agentJobPath ?? DEFAULT_AGENT_JOB_PATH;
    this.onCall = options.onCall;
    this.budget = options.agentJobBudget ?? new AgentJobBudget();
    this.limiter = options.requestsPerMinute
      ? new RequestLimiter(options.requestsPerMinute, Date.now, SENT_TO_PLATFORM_WINDOW_MS)
      : undefined;
    this.agent = new HttpAgent({
      connectTimeoutMs: this.timeouts.connectMs,
      headersTimeoutMs: this.timeouts.headersMs,
      bodyTimeoutMs: this.timeouts.bodyMs,
    });
  }

  /** Creates an agent job (201). Counts against the per-project budget; see CreateAgentJobOptions. */
  async createAgentJob(
    projectId: string,
    prompt: string,
    options: CreateAgentJobOptions = {},
  ): Promise<AgentJob> {
    // A wait for the budget is use too.
    return this.inUse(() => this.createAgentJobWithinBudget(projectId, prompt, options));
  }

  private async createAgentJobWithinBudget(
    projectId: string,
    prompt: string,
    options: CreateAgentJobOptions,
  ): Promise<AgentJob> {
    let reservation = this.budget.tryReserve(projectId);
    while (!reservation) {
      const waitMs = this.budget.delayMs(projectId);
      if (!options.waitForBudget) {
        throw new RateLimitedError(
          `Not creating an agent job for project ${projectId}: the limit of ${this.budget.limit} per hour is used up ` +
            `on this client; the next one can be created in ${Math.ceil(waitMs / 1000)} s.`,
          { operation: 'createAgentJob', retryAfterMs: waitMs, clientSide: true },
        );
      }
      this.logger?.info({ projectId, waitMs }, 'agent job budget used up; waiting');
      await pause(waitMs, options.signal);
      reservation = this.budget.tryReserve(projectId);
    }
    try {
      return await this.call(
        {
          operation: 'createAgentJob',
          method: 'POST',
          path: `/v2/agent/${seg(projectId)}/job`,
          route: '/v2/agent/{projectId}/job',
          body: { prompt },
          schema: AgentJobSchema,
          retry: 'create',
          subject: { projectId },
          onRateLimited: (ms) => this.budget.blockFor(projectId, ms),
        },
        options.signal,
      );
    } catch (err) {
      // A 4xx answer or an unsent request created nothing: give the slot back.
      const nothingCreated =
        (err instanceof AdminApiError && err.status !== undefined && err.status < 500) ||
        ((err instanceof NetworkError || err instanceof TimeoutError) && err.beforeRequestSent);
      if (nothingCreated) reservation.release();
      throw err;
    }
  }

  getAgentJob(projectId: string, id: string, options: CallOptions = {}): Promise<AgentJob> {
    const path = this.agentJobPath.replaceAll('{projectId}', seg(projectId)).replaceAll('{id}', seg(id));
    return this.call(
      {
        operation: 'getAgentJob',
        method: 'GET',
        path,
        route: this.agentJobPath,
        schema: AgentJobSchema,
        retry: 'idempotent',
        subject: { projectId, agentJobId: id },
      },
      options.signal,
    );
  }

  /** Sends a follow-up prompt to an agent job (VENDOR-FACTS); like a create, not blindly retried. */
  sendAgentMessage(
    projectId: string,
    id: string,
    prompt: string,
    options: CallOptions = {},
  ): Promise<AgentJob> {
    return this.call(
      {
        operation: 'sendAgentMessage',
        method: 'POST',
        path: `/v2/agent/${seg(projectId)}/job/${seg(id)}/message`,
        route: '/v2/agent/{projectId}/job/{id}/message',
        body: { prompt },
        schema: AgentJobSchema,
        retry: 'create',
        subject: { projectId, agentJobId: id },
      },
      options.signal,
    );
  }

  /** Starts a static export (202) in the revision the target names. Not blindly retried. */
  startExport(target: ExportTarget, options: CallOptions = {}): Promise<StartedExport> {
    return startExport(this, target, options);
  }

  /** A job's status; a job of the current revision reports no progress or page count. */
  async getExport(job: ExportJobRef, options: CallOptions = {}): Promise<ExportStatus> {
    return (await readExport(this, job, options)).status;
  }

  /**
   * A job's status and, when its revision's answer carries one (a completed job of the current
   * revision), the link to its bundle (a secret): the poll that sees the job complete has the link.
   */
  readExport(job: ExportJobRef, options: CallOptions = {}): Promise<ExportRead> {
    return readExport(this, job, options);
  }

  /** A (fresh) link to the bundle of a completed job, as its revision gives one. A secret URL. */
  exportLink(job: ExportJobRef, options: CallOptions = {}): Promise<GeneratedBundle> {
    return exportLink(this, job, options);
  }

  /** Generates (or renews) the bundle link of a completed export of the contract's revision. A secret URL. */
  generateBundle(jobId: string, options: CallOptions = {}): Promise<GeneratedBundle> {
    return generateBundle(this, jobId, options);
  }

  /**
   * A digest of the base URL and key: equal for two clients that act as the same account (two
   * Secrets holding the same key), without the key itself ever being compared or kept elsewhere.
   */
  get identity(): string {
    return this.#identity;
  }

  /**
   * Names the key in metrics and logs without revealing it: the identity digest's first 12 hex
   * digits (a one-way hash of the base URL and key; too short to confirm a guessed key offline).
   */
  get keyId(): string {
    return this.#identity.slice(0, 12);
  }

  /** Requests the per-minute limit still allows now; undefined when there is no limit. */
  requestsRemaining(): number | undefined {
    return this.limiter?.remaining();
  }

  /** True while an operation is under way (waits for a slot, the budget or a retry included). */
  get busy(): boolean {
    return this.operations > 0;
  }

  async close(): Promise<void> {
    this.agent.close();
  }

  // --- machinery ---

  /** One call, retried as its spec allows and counted against the per-minute limit. */
  async call<S extends z.ZodType>(spec: CallSpec<S>, signal: AbortSignal | undefined): Promise<z.output<S>> {
    return this.inUse(() => this.callWithRetries(spec, signal));
  }

  /** Counts an operation as under way while it runs, so the client is not closed under it. */
  private async inUse<T>(run: () => Promise<T>): Promise<T> {
    this.operations++;
    try {
      return await run();
    } finally {
      this.operations--;
    }
  }

  private async callWithRetries<S extends z.ZodType>(
    spec: CallSpec<S>,
    signal: AbortSignal | undefined,
  ): Promise<z.output<S>> {
    for (let attempt = 1; ; attempt++) {
      await this.waitForSlot(spec.operation, signal);
      try {
        const answer = await this.attempt(spec, signal);
        return this.parse(spec, answer);
      } catch (err) {
        if (!(err instanceof AdminApiError)) throw err;
        if (err instanceof RateLimitedError && err.retryAfterMs !== undefined)
          spec.onRateLimited?.(err.retryAfterMs);
        const delayMs = this.retryDelay(spec.retry, err, attempt);
        if (delayMs === undefined) throw err;
        this.logger?.warn(
          { operation: spec.operation, attempt, kind: err.kind, status: err.status, delayMs },
          'admin API call failed; retrying',
        );
        await pause(delayMs, signal);
      }
    }
  }

  /** Milliseconds until the per-minute limit lets one more request through (0: now). */
  requestDelayMs(): number {
    return this.limiter?.delayMs() ?? 0;
  }

  /** Every HTTP attempt, retries included, counts against the per-minute limit. */
  private async waitForSlot(operation: Operation, signal: AbortSignal | undefined): Promise<void> {
    if (!this.limiter) return;
    for (let waitMs = this.limiter.tryTake(); waitMs > 0; waitMs = this.limiter.tryTake()) {
      this.logger?.debug({ operation, waitMs }, 'per-minute request limit reached; waiting');
      await pause(waitMs, signal);
    }
  }

  private retryDelay(retry: RetryClass, err: AdminApiError, attempt: number): number | undefined {
    const policy = this.retryPolicy;
    if (attempt >= policy.attempts) return undefined;
    const delay = backoff(attempt - 1, { base: policy.baseDelayMs, max: policy.maxDelayMs, jitter: 'full' });
    // Waiting out the hourly start limit is the caller's decision, not a retry's.
    if (err instanceof ExportStartLimitError) return undefined;
    if (err instanceof RateLimitedError) {
      if (err.retryAfterMs === undefined) return delay;
      if (err.retryAfterMs > policy.maxRetryAfterMs) return undefined;
      // A little jitter so callers told the same Retry-After do not return in lockstep.
      return err.retryAfterMs + Math.random() * Math.min(1000, policy.baseDelayMs);
    }
    const transient =
      retry === 'idempotent'
        ? err.kind === 'Network' || err.kind === 'Timeout' || err.kind === 'Server'
        : (err instanceof NetworkError || err instanceof TimeoutError) && err.beforeRequestSent;
    return transient ? delay : undefined;
  }

  private async attempt(spec: CallSpec<z.ZodType>, signal: AbortSignal | undefined): Promise<Answer> {
    const limit = deadline(this.timeouts.requestMs, signal);
    try {
      return await this.send(spec, signal, limit);
    } finally {
      limit.dispose();
    }
  }

  private async send(
    spec: CallSpec<z.ZodType>,
    signal: AbortSignal | undefined,
    limit: Deadline,
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      authorization: this.#authorization,
      accept: 'application/json',
    };
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const res = await this.agent.request(`${this.baseUrl}${spec.path}`, {
        method: spec.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: limit.signal,
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await readText(
        res.body,
        MAX_RESPONSE_BYTES,
        () =>
          new InvalidResponseError(
            `The admin API answered ${spec.operation} (HTTP ${status}) with more than ${MAX_RESPONSE_BYTES} bytes, ` +
              'which no answer of it needs: a proxy in between or another server answered. Check the API URL.' +
              unusableStartAdvice(spec, status),
            { operation: spec.operation, status, field: '(body)' },
          ),
      );
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof AdminApiError) throw err;
      const failure = this.transportError(spec, err, limit.expired());
      this.onCall?.(
        spec.operation,
        failure.kind === 'Timeout' ? 'timeout' : 'network',
        elapsed(),
        `${spec.method} ${spec.route}`,
      );
      throw failure;
    }
    this.onCall?.(spec.operation, status, elapsed(), `${spec.method} ${spec.route}`);
    this.logger?.debug(
      { operation: spec.operation, method: spec.method, path: spec.path, status, durationMs: elapsed() },
      'admin API call',
    );
    if (status >= 200 && status < 300) {
      try {
        return { status, json: JSON.parse(text) };
      } catch {
        throw new InvalidResponseError(
          `The admin API answered ${spec.operation} with a body that is not JSON (HTTP ${status}). A proxy or ` +
            `gateway in between may have replied instead; check the API URL.${unusableStartAdvice(spec, status)}`,
          { operation: spec.operation, status, field: '(body)' },
        );
      }
    }
    throw httpError(spec.operation, spec.subject, spec.answers, status, text, retryAfter);
  }

  private parse<S extends z.ZodType>(spec: CallSpec<S>, answer: Answer): z.output<S> {
    const parsed = spec.schema.safeParse(answer.json);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? issue.path.map(String).join('.') : '(body)';
    throw new InvalidResponseError(
      `The admin API answered ${spec.operation} without a usable "${field}" (${issue?.message ?? 'invalid'}). ` +
        'The API may have changed: upgrade static-export-operator or report the response shape.' +
        unusableStartAdvice(spec, answer.status),
      { operation: spec.operation, status: answer.status, field },
    );
  }

  /**
   * A failure without an answer. For a start sent in full, the advice is not "try again": the
   * platform may have created the job before the connection failed.
   */
  private transportError(spec: CallSpec<z.ZodType>, err: unknown, deadlineHit: boolean): AdminApiError {
    const { operation } = spec;
    const code = errorCode(err);
    const where = describeUrl(this.baseUrl);
    const afterSending = (beforeRequestSent: boolean, otherwise: string): string =>
      operation === 'startExport' && spec.answers && !beforeRequestSent
        ? spec.answers.mayHaveStarted
        : otherwise;
    if (deadlineHit) {
      return new TimeoutError(
        `The admin API at ${where} did not complete ${operation} within ${this.timeouts.requestMs} ms; ` +
          `it may be overloaded or unreachable. ${afterSending(false, 'Try again later or raise the timeout.')}`,
        { operation, cause: err, beforeRequestSent: false },
      );
    }
    if (err instanceof HttpTimeoutError) {
      const beforeRequestSent = err.phase === 'connect';
      return new TimeoutError(
        `Timed out (${err.phase}) talking to the admin API at ${where} during ${operation}. ` +
          afterSending(beforeRequestSent, 'Check network access to the API and try again.'),
        { operation, cause: err, beforeRequestSent },
      );
    }
    const beforeRequestSent = code !== undefined && CONNECT_FAILURES.has(code);
    return new NetworkError(
      `Could not ${beforeRequestSent ? 'connect to' : 'complete the exchange with'} the admin API at ${where} ` +
        `during ${operation} (${code ?? (err as Error)?.message ?? 'unknown error'}). ` +
        afterSending(beforeRequestSent, 'Check the API URL and network access.'),
      { operation, cause: err, beforeRequestSent },
    );
  }
}
