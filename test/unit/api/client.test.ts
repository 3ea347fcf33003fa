import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminApiClient,
  type AdminApiClientOptions,
  AdminApiError,
  AgentJobBudget,
  BadRequestError,
  type CallStatus,
  ConflictError,
  InvalidResponseError,
  isAgentJobFinished,
  isExportFinished,
  NetworkError,
  NotEntitledError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../../../src/api/index.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { call } from '../simulator/helpers.ts';

const FAST_RETRY = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 3000 };
const NON_ENTERPRISE = 'mint_starterplan0000000000';

let sim: Simulator;
const clients: AdminApiClient[] = [];

function client(options: Partial<AdminApiClientOptions> = {}): AdminApiClient {
  const c = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey, retry: FAST_RETRY, ...options });
  clients.push(c);
  return c;
}

function requestsTo(endpoint: string, since: number): number {
  return sim.requests.slice(since).filter((r) => r.endpoint === endpoint).length;
}

/** The admin API error a call failed with (the test fails if it succeeded). */
const caught = (promise: Promise<unknown>) => rejectionOf(promise, AdminApiError);

async function untilCompleted(c: AdminApiClient, jobId: string) {
  for (let i = 0; i < 100; i++) {
    const job = await c.getExport({ revision: 'contract', jobId });
    if (isExportFinished(job)) return job;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('export did not finish');
}

beforeAll(async () => {
  sim = await startSimulator({
    exportDurationMs: 150,
    agentJobDurationMs: 100,
    linkTtlSeconds: 120,
    nonEnterpriseKeys: [NON_ENTERPRISE],
  });
});
afterEach(() => sim.configure({ faults: [] }));
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sim.close();
});

describe('static export', () => {
  it('starts (202), reports progress, completes and generates a working bundle link', async () => {
    const c = client();
    const started = await c.startExport({ domain: 'docs.acme.dev', version: '2024-06-01' });
    expect(started.jobId).toMatch(/^se_[0-9a-f]{16}$/);
    expect(started.status).toBe('queued');
    expect(sim.requests.at(-1)?.status).toBe(202);

    const seen: Array<{ status: string; progress?: number; pageCount?: number }> = [];
    for (let i = 0; i < 100; i++) {
      const job = await c.getExport({ revision: 'contract', jobId: started.jobId });
      seen.push(job);
      if (isExportFinished(job)) break;
      await new Promise((r) => setTimeout(r, 15));
    }
    const last = seen.at(-1);
    expect(last?.status).toBe('completed');
    expect(last?.pageCount).toBe(8);
    const running = seen.filter((s) => s.status === 'running');
    expect(running.length).toBeGreaterThan(0);
    for (const r of running) {
      expect(r.progress).toBeGreaterThanOrEqual(0);
      expect(r.progress).toBeLessThanOrEqual(100);
    }
    const progress = running.map((r) => r.progress ?? -1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));

    const bundle = await c.generateBundle(started.jobId);
    expect(bundle.jobId).toBe(started.jobId);
    expect(bundle.expiresAt).toBeInstanceOf(Date);
    const ttl = bundle.expiresAt.getTime() - Date.now();
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(121_000);
    const res = await fetch(bundle.bundleUrl);
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(bundle.sizeBytes);
  });

  it('409 Conflict for a bundle before completion, not retried', async () => {
    sim.configure({ exportDurationMs: 60_000 });
    const c = client();
    const { jobId } = await c.startExport({ domain: 'docs.acme.dev' });
    sim.configure({ exportDurationMs: 150 });
    const since = sim.requests.length;
    const err = await caught(c.generateBundle(jobId));
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.kind).toBe('Conflict');
    expect(err.status).toBe(409);
    expect(err.message).toMatch(/not completed.*Poll the job/);
    expect(requestsTo('bundle', since)).toBe(1);
  });

  it('failed exports are finished with an error text, and their bundle is a 409', async () => {
    const c = client();
    const { jobId } = await c.startExport({ domain: 'fail.acme.dev' });
    const job = await untilCompleted(c, jobId);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/failed/);
    expect(await caught(c.generateBundle(jobId))).toBeInstanceOf(ConflictError);
  });

  it('400 with the server text and details for an invalid domain', async () => {
    const err = await caught(client().startExport({ domain: 'https://docs.acme.dev/' }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.status).toBe(400);
    expect((err as BadRequestError).details).toEqual([expect.objectContaining({ path: 'domain' })]);
    expect(err.message).toMatch(/domain: must be a bare host/);
    expect(err.serverMessage).toMatch(/Invalid request/);
  });

  it('404 for an unknown job, not retried', async () => {
    const since = sim.requests.length;
    const err = await caught(client().getExport({ revision: 'contract', jobId: 'se_doesnotexist0000' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toContain('se_doesnotexist0000');
    expect(requestsTo('status', since)).toBe(1);
  });

  it('401 for an unknown key', async () => {
    const err = await caught(
      client({ apiKey: 'mint_notarealkey123' }).startExport({ domain: 'docs.acme.dev' }),
    );
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err.kind).toBe('Unauthorized');
    expect(err.message).toMatch(/API keys page/);
    expect(err.message).not.toContain('mint_notarealkey123');
  });

  it('403 NotEntitled for a key whose plan lacks export; agent jobs still work with it', async () => {
    const c = client({ apiKey: NON_ENTERPRISE });
    const err = await caught(c.startExport({ domain: 'docs.acme.dev' }));
    expect(err).toBeInstanceOf(NotEntitledError);
    expect(err.kind).toBe('Forbidden');
    expect(err.message).toMatch(/Enterprise plan/);
    await expect(c.createAgentJob('proj-ne', 'Fix typos')).resolves.toMatchObject({ status: 'active' });
  });
});

describe('agent jobs', () => {
  it('creates (201) an active job that completes with a PR link', async () => {
    const c = client();
    const job = await c.createAgentJob('proj-a', 'Document the new flag');
    expect(sim.requests.at(-1)?.status).toBe(201);
    expect(job.status).toBe('active');
    expect(job.prLink).toBeNull();
    expect(isAgentJobFinished(job)).toBe(false);
    await new Promise((r) => setTimeout(r, 120));
    const done = await c.getAgentJob('proj-a', job.id);
    expect(done.status).toBe('completed');
    expect(done.prLink).toMatch(/^https:\/\/github\.com\/.+\/pull\/\d+$/);
    expect(done.source?.repository).toMatch(/^https:\/\/github\.com\//);
  });

  it('fails, can be archived, and takes follow-up messages', async () => {
    const c = client();
    const job = await c.createAgentJob('proj-a', 'Please fail this one');
    await new Promise((r) => setTimeout(r, 120));
    expect((await c.getAgentJob('proj-a', job.id)).status).toBe('failed');

    const again = await c.sendAgentMessage('proj-a', job.id, 'Try again');
    expect(again.status).toBe('active');

    await call(sim, 'POST', `/v2/agent/proj-a/job/${job.id}/archive`);
    const archived = await c.getAgentJob('proj-a', job.id);
    expect(archived.status).toBe('archived');
    expect(archived.archivedAt).toEqual(expect.any(String));
    expect(isAgentJobFinished(archived)).toBe(true);
  });

  it('400 with details for an empty prompt, and the budget slot is given back', async () => {
    const c = client();
    const before = c.budget.remaining('proj-b');
    const err = await caught(c.createAgentJob('proj-b', ''));
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).details).toEqual([expect.objectContaining({ path: 'prompt' })]);
    expect(c.budget.remaining('proj-b')).toBe(before);
  });

  it('404 for unknown agent jobs, and the get path is configurable', async () => {
    const c = client();
    expect(await caught(c.getAgentJob('proj-a', 'job_missing'))).toBeInstanceOf(NotFoundError);
    const custom = client({ agentJobPath: '/v2/agent/{projectId}/sessions/{id}' });
    await caught(custom.getAgentJob('p x', 'j/1'));
    expect(sim.requests.at(-1)?.path).toBe('/v2/agent/p%20x/sessions/j%2F1');
  });

  it('a server 429 beyond maxRetryAfter is reported with its Retry-After and blocks the budget', async () => {
    const limited = await startSimulator({ rateLimitPerHour: 2 });
    try {
      const c = new AdminApiClient({ baseUrl: limited.baseUrl, apiKey: limited.adminKey, retry: FAST_RETRY });
      clients.push(c);
      await c.createAgentJob('proj-r', 'one');
      await c.createAgentJob('proj-r', 'two');
      const err = await caught(c.createAgentJob('proj-r', 'three'));
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).clientSide).toBe(false);
      expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(3_500_000);
      expect(err.serverMessage).toBe('Too many sessions created. Please try again later.');
      expect(limited.requests.filter((r) => r.status === 429)).toHaveLength(1);
      // The shared budget now knows the server is saturated: no further request is sent.
      expect(c.budget.delayMs('proj-r')).toBeGreaterThan(3_500_000);
      expect((await caught(c.createAgentJob('proj-r', 'four'))) as RateLimitedError).toMatchObject({
        clientSide: true,
      });
      expect(limited.requests).toHaveLength(3);
      // An hour later the server accepts again.
      limited.advanceTime(3_600_000);
      const fresh = new AdminApiClient({ baseUrl: limited.baseUrl, apiKey: limited.adminKey });
      clients.push(fresh);
      await expect(fresh.createAgentJob('proj-r', 'five')).resolves.toMatchObject({ status: 'active' });
    } finally {
      await limited.close();
    }
  });

  it("reports the vendor's per-minute limit with its Retry-After instead of waiting a minute inside the call", async () => {
    const limited = await startSimulator({ requestsPerMinute: 2 });
    try {
      const c = new AdminApiClient({ baseUrl: limited.baseUrl, apiKey: limited.adminKey, retry: FAST_RETRY });
      clients.push(c);
      const { jobId } = await c.startExport({ domain: 'docs.example.com' });
      await c.getExport({ revision: 'contract', jobId });
      const err = await caught(c.getExport({ revision: 'contract', jobId }));
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(FAST_RETRY.maxRetryAfterMs);
      expect(err.message).toMatch(/rate limit was hit during getExport \(429\).*Try again in \d+ s/);
      limited.advanceTime(60_000);
      await expect(c.getExport({ revision: 'contract', jobId })).resolves.toMatchObject({ jobId });
    } finally {
      await limited.close();
    }
  });

  it('with requestsPerMinute, waits for a slot instead of sending a request the server would refuse', async () => {
    const limited = await startSimulator({ requestsPerMinute: 2 });
    try {
      const c = new AdminApiClient({
        baseUrl: limited.baseUrl,
        apiKey: limited.adminKey,
        retry: FAST_RETRY,
        requestsPerMinute: 2,
      });
      clients.push(c);
      const { jobId } = await c.startExport({ domain: 'docs.example.com' });
      await c.getExport({ revision: 'contract', jobId });
      const waiting = c.getExport({ revision: 'contract', jobId }, { signal: AbortSignal.timeout(300) });
      await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError' });
      // A start may give up waiting for its slot without a request being sent.
      const start = c.startExport({ domain: 'docs.example.com' }, { signal: AbortSignal.timeout(300) });
      await expect(start).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(limited.requests.map((r) => r.status)).toEqual([202, 200]);
    } finally {
      await limited.close();
    }
  });

  it('waits out a 429 with a short Retry-After on create', async () => {
    sim.configure({ faults: ['agent-create:429:1:1'] });
    const statuses: CallStatus[] = [];
    const c = client({ onCall: (_op, status) => statuses.push(status) });
    const t0 = performance.now();
    const job = await c.createAgentJob('proj-w', 'hello');
    expect(job.status).toBe('active');
    expect(statuses).toEqual([429, 201]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(990);
  });

  it('enforces 100 creations per hour per project across clients sharing a budget', async () => {
    const budget = new AgentJobBudget();
    const a = client({ agentJobBudget: budget });
    const b = client({ agentJobBudget: budget });
    const before = sim.agentJobsCreated('proj-budget');
    for (let i = 0; i < 100; i++) await (i % 2 ? a : b).createAgentJob('proj-budget', `job ${i}`);
    expect(sim.agentJobsCreated('proj-budget') - before).toBe(100);
    const err = (await caught(a.createAgentJob('proj-budget', 'one too many'))) as RateLimitedError;
    expect(err.clientSide).toBe(true);
    expect(err.retryAfterMs).toBeGreaterThan(3_500_000);
    expect(await caught(b.createAgentJob('proj-budget', 'one too many'))).toBeInstanceOf(RateLimitedError);
    expect(sim.agentJobsCreated('proj-budget') - before).toBe(100);
    expect(budget.nextAllowedAt('proj-budget').getTime()).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it('waits for the budget when asked to', async () => {
    const budget = new AgentJobBudget({ limit: 1, windowMs: 1000 });
    const c = client({ agentJobBudget: budget });
    await c.createAgentJob('proj-wait', 'first');
    await expect(c.createAgentJob('proj-wait', 'second')).rejects.toBeInstanceOf(RateLimitedError);
    const expectedWait = budget.delayMs('proj-wait');
    expect(expectedWait).toBeGreaterThan(0);
    const t0 = performance.now();
    await c.createAgentJob('proj-wait', 'second', { waitForBudget: true });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(expectedWait - 20);
  });
});

describe('retries and faults', () => {
  async function completedJob(): Promise<string> {
    const c = client();
    const { jobId } = await c.startExport({ domain: 'docs.acme.dev' });
    await untilCompleted(c, jobId);
    return jobId;
  }

  it('retries 5xx on reads until success', async () => {
    const jobId = await completedJob();
    sim.configure({ faults: ['status:503:1:2'] });
    const statuses: CallStatus[] = [];
    const job = await client({ onCall: (_o, s) => statuses.push(s) }).getExport({
      revision: 'contract',
      jobId,
    });
    expect(job.status).toBe('completed');
    expect(statuses).toEqual([503, 503, 200]);
  });

  it('retries generate-bundle on 5xx and 429', async () => {
    const jobId = await completedJob();
    sim.configure({ faults: ['bundle:500:1:1', 'bundle:429:1:1'] });
    const statuses: CallStatus[] = [];
    const bundle = await client({ onCall: (_o, s) => statuses.push(s) }).generateBundle(jobId);
    expect(bundle.bundleUrl).toContain(`/bundles/${jobId}/`);
    expect(statuses).toEqual([500, 429, 200]);
  });

  it('gives up after the configured attempts with a ServerError', async () => {
    const jobId = await completedJob();
    sim.configure({ faults: ['status:502:1'] });
    const since = sim.requests.length;
    const err = await caught(client().getExport({ revision: 'contract', jobId }));
    expect(err).toBeInstanceOf(ServerError);
    expect(err.status).toBe(502);
    expect(requestsTo('status', since)).toBe(FAST_RETRY.attempts);
  });

  it('does not retry creates on 5xx or a reset connection', async () => {
    const c = client();
    for (const fault of ['start:503:1', 'start:reset:1']) {
      sim.configure({ faults: [fault] });
      const since = sim.requests.length;
      const jobsBefore = sim.exportJobsStarted();
      const err = await caught(c.startExport({ domain: 'docs.acme.dev' }));
      expect(err.kind).toBe(fault.includes('503') ? 'Server' : 'Network');
      expect(requestsTo('start', since)).toBe(1);
      expect(sim.exportJobsStarted()).toBe(jobsBefore);
    }
    sim.configure({ faults: ['agent-create:500:1'] });
    const since = sim.requests.length;
    expect(await caught(c.createAgentJob('proj-f', 'x'))).toBeInstanceOf(ServerError);
    expect(requestsTo('agent-create', since)).toBe(1);
  });

  it('retries a reset connection on reads, and reports NetworkError when it persists', async () => {
    const jobId = await completedJob();
    sim.configure({ faults: ['status:reset:1:1'] });
    expect((await client().getExport({ revision: 'contract', jobId })).status).toBe('completed');
    sim.configure({ faults: ['agent-get:reset:1'] });
    const err = await caught(client().getAgentJob('proj-a', 'job_x'));
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).beforeRequestSent).toBe(false);
  });

  it('times out slow answers (overall deadline) and retries them on reads', async () => {
    const jobId = await completedJob();
    sim.configure({ faults: ['status:delay=600:1'] });
    const statuses: CallStatus[] = [];
    const slow = client({ timeouts: { requestMs: 150 }, onCall: (_o, s) => statuses.push(s) });
    const err = await caught(slow.getExport({ revision: 'contract', jobId }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toMatch(/within 150 ms/);
    expect(statuses).toEqual(['timeout', 'timeout', 'timeout']);
    sim.configure({ faults: ['status:delay=600:1:1'] });
    expect((await slow.getExport({ revision: 'contract', jobId })).status).toBe('completed');
  });

  it('times out on the headers timeout too', async () => {
    sim.configure({ faults: ['agent-get:delay=2500:1'] });
    const err = await caught(
      client({ timeouts: { headersMs: 100 }, retry: { attempts: 1 } }).getAgentJob('p', 'j'),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toMatch(/headers/);
  });

  it('reports a malformed body as InvalidResponse without retrying', async () => {
    const jobId = await completedJob();
    sim.configure({ faults: ['status:malformed:1'] });
    const since = sim.requests.length;
    const err = await caught(client().getExport({ revision: 'contract', jobId }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).field).toBe('(body)');
    expect(err.message).toMatch(/not JSON/);
    expect(requestsTo('status', since)).toBe(1);
  });

  it('start and agent-create delays within the deadline just slow things down', async () => {
    sim.configure({ faults: ['start:delay=100:1', 'agent-create:delay=100:1'] });
    const c = client();
    await expect(c.startExport({ domain: 'docs.acme.dev' })).resolves.toHaveProperty('jobId');
    await expect(c.createAgentJob('proj-d', 'x')).resolves.toHaveProperty('id');
  });

  it('retries creates when the connection was refused (nothing was sent)', async () => {
    const closed = await startSimulator();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const statuses: CallStatus[] = [];
    const budget = new AgentJobBudget();
    const c = new AdminApiClient({
      baseUrl,
      apiKey: sim.adminKey,
      retry: FAST_RETRY,
      agentJobBudget: budget,
      onCall: (_o, s) => statuses.push(s),
    });
    clients.push(c);
    const err = await caught(c.createAgentJob('proj-n', 'x'));
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).beforeRequestSent).toBe(true);
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(statuses).toEqual(['network', 'network', 'network']);
    expect(budget.remaining('proj-n')).toBe(100);
  });

  it('stops waiting when the caller aborts', async () => {
    sim.configure({ faults: ['status:503:1'] });
    const c = client({ retry: { attempts: 5, baseDelayMs: 10_000, maxDelayMs: 10_000 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutting down')), 100);
    const t0 = performance.now();
    await expect(
      c.getExport({ revision: 'contract', jobId: 'se_any' }, { signal: controller.signal }),
    ).rejects.toThrow('shutting down');
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
