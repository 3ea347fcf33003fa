// What the production client makes of a start's answers that the hourly start budget depends on,
// over real HTTP to the simulator: the per-minute 429 (retried after its Retry-After) apart from the
// hourly one, answers that may follow the job's creation (never retried, never "temporary"), and the
// 404s of an unknown project and of a server without the revision asked for.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminApiClient,
  AdminApiError,
  BadRequestError,
  type CallStatus,
  ExportBusyError,
  ExportStartLimitError,
  NotFoundError,
  ProjectNotFoundError,
  RateLimitedError,
  RevisionUnavailableError,
  startMayHaveCreatedJob,
} from '../../../src/api/index.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { rejectionOf } from '../../support/rejection.ts';

const RETRY = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 3000 };

let v1: Simulator;
let v2: Simulator;
const clients: AdminApiClient[] = [];

function client(sim: Simulator, onCall?: (status: CallStatus) => void, requestMs = 60_000): AdminApiClient {
  const c = new AdminApiClient({
    baseUrl: sim.baseUrl,
    apiKey: sim.adminKey,
    retry: RETRY,
    timeouts: { requestMs },
    ...(onCall ? { onCall: (_o, status) => onCall(status) } : {}),
  });
  clients.push(c);
  return c;
}

/** The admin API error a call failed with (the test fails if it succeeded). */
const caught = (promise: Promise<unknown>) => rejectionOf(promise, AdminApiError);

const startsSince = (sim: Simulator, since: number) =>
  sim.requests.slice(since).filter((r) => r.endpoint === 'start').length;

beforeAll(async () => {
  [v1, v2] = await Promise.all([
    startSimulator({ exportDurationMs: 60_000 }),
    startSimulator({ apiRevision: 2, exportDurationMs: 60_000, unknownProjects: ['ghost'] }),
  ]);
});
afterEach(() => {
  for (const sim of [v1, v2]) {
    sim.configure({ faults: [] });
    // A fresh hour, and every job of the test over.
    sim.advanceTime(3_600_000);
  }
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([v1.close(), v2.close()]);
});

describe('a 429 on a start', () => {
  it('in the per-minute wording is waited out for its Retry-After and the start sent again', async () => {
    v2.configure({ faults: ['start:429:1:1'] });
    const statuses: CallStatus[] = [];
    const t0 = performance.now();
    const started = await client(v2, (s) => statuses.push(s)).startExport({ projectId: 'minute' });
    expect(started.status).toBe('queued');
    expect(statuses).toEqual([429, 202]);
    // Retry-After: 1, waited out in full.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(990);
    expect(v2.exportJobsStarted()).toBeGreaterThan(0);
  });

  it('of the per-minute limit with a Retry-After beyond the retry policy is a RateLimitedError, never the hourly limit', async () => {
    const limited = await startSimulator({ apiRevision: 2, exportDurationMs: 60_000, requestsPerMinute: 1 });
    try {
      const c = new AdminApiClient({ baseUrl: limited.baseUrl, apiKey: limited.adminKey, retry: RETRY });
      clients.push(c);
      await c.startExport({ projectId: 'first' });
      const err = await caught(c.startExport({ projectId: 'second' }));
      expect(err).toBeInstanceOf(RateLimitedError);
      expect(err).not.toBeInstanceOf(ExportStartLimitError);
      expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(50_000);
      expect(err.message).toMatch(
        /per-minute request limit refused startExport of project second \(429\): no export was started/,
      );
      expect(err.message).not.toContain('10 export starts');
      expect(startMayHaveCreatedJob(err)).toBe(false);
    } finally {
      await limited.close();
    }
  });

  it('in the hourly wording is the start limit, even with a short Retry-After', async () => {
    const c = client(v2);
    for (let n = 0; n < 10; n++) await c.startExport({ projectId: `hour${n}` });
    // The oldest start leaves the window in 90 s: a short Retry-After, yet the hourly limit.
    v2.advanceTime(3_600_000 - 90_000);
    const since = v2.requests.length;
    const err = await caught(c.startExport({ projectId: 'hour10' }));
    expect(err).toBeInstanceOf(ExportStartLimitError);
    expect((err as ExportStartLimitError).retryAfterMs).toBeLessThanOrEqual(90_000);
    expect(startsSince(v2, since)).toBe(1);
  });
});

describe('a start whose answer may follow the job’s creation', () => {
  it.each([
    ['start:created=502:1', 'Server'],
    ['start:created=504:1', 'Server'],
    ['start:created=reset:1', 'Network'],
  ])('%s: sent once, the job exists, and the message says it may have started', async (fault, kind) => {
    for (const [sim, target] of [
      [v2, { projectId: `created${fault.length}` }],
      [v1, { domain: 'docs.acme.dev' }],
    ] as const) {
      sim.configure({ faults: [fault] });
      const since = sim.requests.length;
      const jobsBefore = sim.exportJobsStarted();
      const err = await caught(client(sim).startExport(target));
      expect(err.kind).toBe(kind);
      expect(startsSince(sim, since)).toBe(1);
      expect(sim.exportJobsStarted()).toBe(jobsBefore + 1);
      expect(startMayHaveCreatedJob(err)).toBe(true);
      expect(err.message).toMatch(/may have started all the same/);
      expect(err.message).toMatch(/Do not start again at once/);
      expect(err.message).not.toMatch(/usually temporary|try again later/i);
      if (sim === v2) expect(err.message).toContain("organization's 10 starts per hour");
    }
    // The job the 5xx hid is running: the next start meets it.
    v2.configure({ faults: [] });
    expect(await caught(client(v2).startExport({ projectId: `created${fault.length}` }))).toBeInstanceOf(
      ExportBusyError,
    );
  });

  it('a start that times out after it was written is sent once and may have started', async () => {
    v2.configure({ faults: ['start:delay=400:1'] });
    const since = v2.requests.length;
    const err = await caught(client(v2, undefined, 100).startExport({ projectId: 'slow' }));
    expect(err.kind).toBe('Timeout');
    expect(startMayHaveCreatedJob(err)).toBe(true);
    expect(err.message).toMatch(/may have started all the same/);
    expect(err.message).not.toMatch(/try again later/i);
    await new Promise((r) => setTimeout(r, 500));
    expect(startsSince(v2, since)).toBe(1);
  });
});

describe('a 404 or 400 on a start', () => {
  it('without a body, for a project outside the organization, is ProjectNotFoundError', async () => {
    const err = await caught(client(v2).startExport({ projectId: 'ghost' }));
    expect(err).toBeInstanceOf(ProjectNotFoundError);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).not.toBeInstanceOf(RevisionUnavailableError);
    expect(err.message).toMatch(
      /Project ghost was not found \(404\) during startExport; check the project id/,
    );
  });

  it('of the current revision at a server with only the contract’s says so and advises spec.domain / --domain', async () => {
    const err = await caught(client(v1).startExport({ projectId: 'acme' }));
    expect(err).toBeInstanceOf(RevisionUnavailableError);
    expect(err).not.toBeInstanceOf(ProjectNotFoundError);
    expect(err.message).toMatch(/has no revision 2 of the static export API/);
    expect(err.message).toMatch(/No such endpoint: POST \/v1\/static-export\/acme\/jobs/);
    expect(err.message).toContain('spec.domain');
    expect(err.message).toContain('--domain');
    expect(err.message).not.toMatch(/check the project id/);
    const get = await caught(
      client(v1).getExport({ revision: 'current', projectId: 'acme', jobId: 'a'.repeat(24) }),
    );
    expect(get).toBeInstanceOf(RevisionUnavailableError);
  });

  it('of the contract’s revision at a server that retired it says so and advises spec.projectId / --project-id', async () => {
    const err = await caught(client(v2).startExport({ domain: 'docs.acme.dev' }));
    expect(err).toBeInstanceOf(RevisionUnavailableError);
    expect(err.message).toMatch(/has no revision 1 of the static export API/);
    expect(err.message).toContain('spec.projectId');
    expect(err.message).toContain('--project-id');
    const get = await caught(client(v2).getExport({ revision: 'contract', jobId: 'se_0000000000000000' }));
    expect(get).toBeInstanceOf(RevisionUnavailableError);
    expect(get.message).toContain('--project-id');
  });

  it('a 400 without a body says the server gave no reason and what to check', async () => {
    v2.configure({ faults: ['start:400:1'] });
    const err = await caught(client(v2).startExport({ projectId: 'acme', basePath: '/docs' }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toBe(
      'The admin API rejected startExport of project acme as invalid (400), without saying why. Check the project ' +
        'id (API keys page of the dashboard) and that the base path is "", "/docs" or "/documentation".',
    );
  });
});
