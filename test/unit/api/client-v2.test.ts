// One client, both revisions of the static export API: what the caller names picks the paths
// (a domain the contract's, a project the current revision's), over real HTTP to the simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminApiClient,
  AdminApiError,
  BadRequestError,
  ConflictError,
  ExportBusyError,
  ExportStartLimitError,
  NotEntitledError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
} from '../../../src/api/index.ts';
import { scrub } from '../../../src/redact.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { download, untar } from '../simulator/helpers.ts';

const FAST_RETRY = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 3000 };
const STARTER_KEY = 'mint_starterplan0000000000';
const READ_ONLY_KEY = 'mint_readonlykey0000000000';
const HEX24 = /^[0-9a-f]{24}$/;

let v1: Simulator;
let v2: Simulator;
const clients: AdminApiClient[] = [];

function client(sim: Simulator, apiKey = sim.adminKey): AdminApiClient {
  const c = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey, retry: FAST_RETRY });
  clients.push(c);
  return c;
}

/** The admin API error a call failed with (the test fails if it succeeded). */
const caught = (promise: Promise<unknown>) => rejectionOf(promise, AdminApiError);

/** The admin API requests the current revision's simulator received since `since`, as `METHOD path`. */
const requestsSince = (since: number) =>
  v2.requests
    .slice(since)
    .filter((r) => r.path.startsWith('/v1/'))
    .map((r) => `${r.method} ${r.path}`);

beforeAll(async () => {
  [v1, v2] = await Promise.all([
    startSimulator({ exportDurationMs: 100 }),
    startSimulator({
      apiRevision: 2,
      exportDurationMs: 1000,
      nonEnterpriseKeys: [STARTER_KEY],
      readOnlyKeys: [READ_ONLY_KEY],
      unknownProjects: ['elsewhere'],
      projects: { off: { exportEnabled: false }, deployed: { basePath: '/documentation' } },
    }),
  ]);
});
afterEach(() => {
  v2.configure({ faults: [] });
  // A fresh hour: the key's 10 starts per hour are one test's subject, not every test's.
  v2.advanceTime(3_600_000);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([v1.close(), v2.close()]);
});

describe('the current revision (a project id)', () => {
  it('starts on the project path with the base path, polls without progress, and gives a fresh secret link per call', async () => {
    const c = client(v2);
    const since = v2.requests.length;
    const started = await c.startExport({ projectId: 'acme', basePath: '/docs' });
    expect(started.jobId).toMatch(HEX24);
    expect(started.status).toBe('queued');
    const ref = { revision: 'current' as const, projectId: 'acme', jobId: started.jobId };

    v2.advanceTime(500);
    const running = await c.getExport(ref);
    expect(running).toMatchObject({ jobId: started.jobId, status: 'running' });
    expect(running.progress).toBeUndefined();
    expect(running.pageCount).toBeUndefined();
    expect(await caught(c.exportLink(ref))).toBeInstanceOf(ConflictError);

    v2.advanceTime(600);
    const done = await c.getExport(ref);
    expect(done.status).toBe('completed');
    // The status leaves the link out: it is asked for with exportLink.
    expect(JSON.stringify(done)).not.toContain('bundleUrl');

    const first = await c.exportLink(ref);
    const second = await c.exportLink(ref);
    expect(second.bundleUrl).not.toBe(first.bundleUrl);
    for (const link of [first, second]) {
      expect(link.jobId).toBe(started.jobId);
      expect(link.expiresAt.getTime()).toBeGreaterThan(v2.now());
      // A secret from the moment it was parsed: nothing scrubbed shows it.
      expect(scrub(`link: ${link.bundleUrl}`)).not.toContain(link.bundleUrl);
      const res = await download(link.bundleUrl);
      expect(res.status).toBe(200);
      expect(res.body.byteLength).toBe(link.sizeBytes);
    }
    // The base path reached the export: the site's links use it.
    const index = (await untar((await download(first.bundleUrl)).body)).get('index.html');
    expect(index?.content.toString()).toContain('href="/docs/assets/site.css"');
    const job = `/v1/static-export/acme/jobs/${started.jobId}`;
    expect(requestsSince(since)).toEqual([
      'POST /v1/static-export/acme/jobs',
      `GET ${job}`,
      `GET ${job}`,
      `GET ${job}`,
      `GET ${job}`,
      `GET ${job}`,
    ]);
  });

  it('sends no base path when none is named: the deployment keeps its own', async () => {
    const c = client(v2);
    const started = await c.startExport({ projectId: 'deployed' });
    v2.advanceTime(1100);
    const link = await c.exportLink({ revision: 'current', projectId: 'deployed', jobId: started.jobId });
    const index = (await untar((await download(link.bundleUrl)).body)).get('index.html');
    expect(index?.content.toString()).toContain('href="/documentation/assets/site.css"');
  });

  it('409 while a job of the project is queued or running is a busy error, not retried', async () => {
    const c = client(v2);
    await c.startExport({ projectId: 'busy' });
    const since = v2.requests.length;
    const err = await caught(c.startExport({ projectId: 'busy' }));
    expect(err).toBeInstanceOf(ExportBusyError);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.status).toBe(409);
    expect(err.message).toMatch(
      /An export of project busy is already queued or running \(409\).*Wait for it to finish, then start again/,
    );
    expect(requestsSince(since)).toHaveLength(1);
    // Another project is free.
    await expect(c.startExport({ projectId: 'other' })).resolves.toMatchObject({ status: 'queued' });
  });

  it('429 past 10 starts an hour is the hourly start limit, with Retry-After and when the next start is possible, not retried', async () => {
    const c = client(v2);
    for (let i = 0; i < 10; i++) await c.startExport({ projectId: `limit${i}` });
    const since = v2.requests.length;
    const err = await caught(c.startExport({ projectId: 'limit10' }));
    expect(err).toBeInstanceOf(ExportStartLimitError);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).not.toBeInstanceOf(ConflictError);
    const retryAfterMs = (err as ExportStartLimitError).retryAfterMs ?? 0;
    expect(retryAfterMs).toBeGreaterThan(3_000_000);
    expect(err.message).toMatch(
      /The platform allows 10 export starts per organization per hour, and they are used up \(429 on project limit10\); the next start is possible in \d+ s \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)/,
    );
    // Retrying cannot help before the hour is over, and a refused start may count too.
    expect(requestsSince(since)).toHaveLength(1);
  });

  it("gives each status code the current revision's reason and fix", async () => {
    const bad = await caught(client(v2).startExport({ projectId: 'not a project!' }));
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad.message).toMatch(/rejected startExport of project not a project! as invalid \(400\)/);
    expect(bad.message).toContain('"", "/docs" or "/documentation"');

    const plan = await caught(client(v2, STARTER_KEY).startExport({ projectId: 'acme' }));
    expect(plan).toBeInstanceOf(UnauthorizedError);
    expect(plan.message).toMatch(
      /\(401\): the key is wrong or revoked, the organization's plan has no API access/,
    );
    const off = await caught(
      client(v2).getExport({ revision: 'current', projectId: 'off', jobId: '0'.repeat(24) }),
    );
    expect(off).toBeInstanceOf(UnauthorizedError);
    expect(off.message).toContain('static export is not enabled for the project');
    expect(off.message).toContain("enable static export in the project's settings");

    const readOnly = await caught(client(v2, READ_ONLY_KEY).startExport({ projectId: 'acme' }));
    expect(readOnly).toBeInstanceOf(NotEntitledError);
    expect(readOnly.message).toMatch(
      /may not start exports of project acme \(403\): it lacks write permission, or this machine's address is not on the key's IP allow-list/,
    );

    const unknown = await caught(client(v2).startExport({ projectId: 'elsewhere' }));
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(unknown.message).toMatch(
      /Project elsewhere was not found \(404\).*key belongs to the project's organization/,
    );
    const noJob = await caught(
      client(v2).getExport({ revision: 'current', projectId: 'acme', jobId: 'f'.repeat(24) }),
    );
    expect(noJob).toBeInstanceOf(NotFoundError);
    expect(noJob.message).toContain(`Export job ${'f'.repeat(24)} of project acme was not found (404)`);

    for (const err of [bad, plan, off, readOnly, unknown, noJob]) {
      expect(err.message).not.toContain(v2.adminKey);
      expect(err.message).not.toContain(STARTER_KEY);
      expect(err.message).not.toContain(READ_ONLY_KEY);
    }
  });
});

describe("the contract's revision (a domain)", () => {
  it('gives the link of a completed job through its bundle call', async () => {
    const c = client(v1);
    const { jobId } = await c.startExport({ domain: 'docs.acme.dev' });
    for (
      let i = 0;
      i < 100 && (await c.getExport({ revision: 'contract', jobId })).status !== 'completed';
      i++
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const since = v1.requests.length;
    const link = await c.exportLink({ revision: 'contract', jobId });
    expect(v1.requests.slice(since).map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /v1/static-export/jobs/${jobId}/bundle`,
    ]);
    expect((await fetch(link.bundleUrl, { method: 'HEAD' })).status).toBe(200);
    expect(scrub(link.bundleUrl)).not.toContain(link.bundleUrl);
  });

  it('keeps its own reasons for 401 and 403', async () => {
    const err = await caught(client(v1, STARTER_KEY).startExport({ domain: 'docs.acme.dev' }));
    expect(err.status).toBe(401);
    expect(err.message).toContain('rejected the API key (401)');
    expect(err.message).not.toContain('allow-list');
  });
});
