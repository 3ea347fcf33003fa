import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultParseError, type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { call } from './helpers.ts';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    exportDurationMs: 1000,
    agentJobDurationMs: 1000,
    rateLimitPerHour: 3,
    nonEnterpriseKeys: ['mint_starter_1'],
  });
});
afterEach(() => sim.configure({ faults: [] }));
afterAll(() => sim.close());

describe('simulator admin API', () => {
  it('generates a mint_ admin key and listens on the chosen loopback port', () => {
    expect(sim.adminKey).toMatch(/^mint_[0-9a-f]{48}$/);
    expect(sim.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('401 without or with a wrong bearer key, on every endpoint', async () => {
    for (const [method, path] of [
      ['POST', '/v2/agent/p/job'],
      ['GET', '/v2/agent/p/job/x'],
      ['POST', '/v1/static-export/jobs'],
      ['GET', '/v1/static-export/jobs/x'],
      ['POST', '/v1/static-export/jobs/x/bundle'],
    ] as const) {
      const body = method === 'POST' ? { prompt: 'x', domain: 'a.example' } : undefined;
      const res = await call(sim, method, path, body, 'mint_wrong');
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.json.error).toEqual(expect.any(String));
      const none = await fetch(`${sim.baseUrl}${path}`, { method });
      expect(none.status).toBe(401);
    }
  });

  it('404 for unknown routes and ids, 405 for wrong methods', async () => {
    expect((await call(sim, 'GET', '/v3/nothing')).status).toBe(404);
    expect((await call(sim, 'GET', '/v1/static-export/jobs/se_nope')).status).toBe(404);
    expect((await call(sim, 'POST', '/v1/static-export/jobs/se_nope/bundle')).status).toBe(404);
    expect((await call(sim, 'GET', '/v2/agent/p/job/job_nope')).status).toBe(404);
    const wrong = await call(sim, 'DELETE', '/v1/static-export/jobs');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  it('403 on export endpoints for a non-Enterprise key', async () => {
    const res = await call(
      sim,
      'POST',
      '/v1/static-export/jobs',
      { domain: 'docs.acme.dev' },
      'mint_starter_1',
    );
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/Enterprise/);
  });

  it.each([
    [{}, 'domain'],
    [{ domain: '' }, 'domain'],
    [{ domain: 'https://docs.acme.dev' }, 'domain'],
    [{ domain: 'docs.acme.dev/guides' }, 'domain'],
    [{ domain: 'docs.acme.dev:8080' }, 'domain'],
    [{ domain: 'docs.acme.dev', version: 5 }, 'version'],
    [{ domain: 'docs.acme.dev', paths: '/a' }, 'paths'],
  ])('400 with details for start body %j', async (body, field) => {
    const res = await call(sim, 'POST', '/v1/static-export/jobs', body);
    expect(res.status).toBe(400);
    expect(res.json.details).toEqual([expect.objectContaining({ path: field })]);
  });

  it('400 for a body that is not JSON', async () => {
    const res = await fetch(`${sim.baseUrl}/v1/static-export/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.adminKey}` },
      body: '{domain:',
    });
    expect(res.status).toBe(400);
  });

  it('400 naming the body itself when it is not a JSON object, 413 beyond 1 MiB', async () => {
    for (const path of ['/v1/static-export/jobs', '/v2/agent/p/job']) {
      const res = await call(sim, 'POST', path, ['docs.acme.dev']);
      expect(res.status, path).toBe(400);
      expect(res.json).toMatchObject({ error: 'Invalid request: body', details: [{ path: '' }] });
    }
    const huge = await call(sim, 'POST', '/v2/agent/p/job', { prompt: 'x'.repeat(1 << 20) });
    expect(huge.status).toBe(413);
    expect(huge.json.error).toBe('Request body too large');
  });

  it('400 for a path with malformed percent-encoding', async () => {
    const res = await call(sim, 'GET', '/v1/static-export/jobs/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/percent-encoding/);
  });

  it('moves an export job queued -> running -> completed with the simulator clock', async () => {
    const started = await call(sim, 'POST', '/v1/static-export/jobs', {
      domain: 'docs.acme.dev',
      version: 'v1',
    });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ status: 'queued', domain: 'docs.acme.dev', version: 'v1' });
    expect(started.json).not.toHaveProperty('progress');
    const id = String(started.json.jobId);
    const bundleEarly = await call(sim, 'POST', `/v1/static-export/jobs/${id}/bundle`);
    expect(bundleEarly.status).toBe(409);

    sim.advanceTime(400);
    const mid = await call(sim, 'GET', `/v1/static-export/jobs/${id}`);
    expect(mid.json.status).toBe('running');
    const p1 = Number(mid.json.progress);
    expect(p1).toBeGreaterThan(0);
    expect(p1).toBeLessThan(100);
    sim.advanceTime(400);
    const later = await call(sim, 'GET', `/v1/static-export/jobs/${id}`);
    expect(Number(later.json.progress)).toBeGreaterThan(p1);
    expect(Number(later.json.pageCount)).toBeGreaterThanOrEqual(Number(mid.json.pageCount));

    sim.advanceTime(300);
    const done = await call(sim, 'GET', `/v1/static-export/jobs/${id}`);
    expect(done.json).toMatchObject({ status: 'completed', progress: 100, pageCount: 8 });
    const bundle = await call(sim, 'POST', `/v1/static-export/jobs/${id}/bundle`);
    expect(bundle.status).toBe(200);
    expect(Object.keys(bundle.json).sort()).toEqual(['bundleUrl', 'expiresAt', 'jobId', 'sizeBytes']);
    expect(sim.exportJob(id)?.files).toContain('guides/install.html');
  });

  it('fails exports for fail.* domains and for an empty docs folder', async () => {
    const failing = await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'fail.acme.dev' });
    sim.configure({ docsDir: '/nonexistent/docs' });
    const empty = await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' });
    sim.configure({ docsDir: new URL('../../../sample-docs/', import.meta.url).pathname });
    sim.advanceTime(1100);
    for (const res of [failing, empty]) {
      const status = await call(sim, 'GET', `/v1/static-export/jobs/${String(res.json.jobId)}`);
      expect(status.json.status).toBe('failed');
      expect(status.json.error).toMatch(/^Export failed/);
    }
  });

  it('counts export jobs started', async () => {
    const before = sim.exportJobsStarted();
    await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' });
    await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'bad domain' });
    expect(sim.exportJobsStarted()).toBe(before + 1);
  });

  it('agent jobs: 400 for missing or empty prompts, 201 active, then completed or failed, archive', async () => {
    for (const body of [{}, { prompt: '' }, { prompt: 7 }]) {
      const res = await call(sim, 'POST', '/v2/agent/proj-1/job', body);
      expect(res.status).toBe(400);
      expect(res.json.details).toEqual([expect.objectContaining({ path: 'prompt' })]);
    }
    const ok = await call(sim, 'POST', '/v2/agent/proj-1/job', { prompt: 'Add a FAQ entry' });
    const bad = await call(sim, 'POST', '/v2/agent/proj-1/job', { prompt: 'This will FAIL' });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({
      status: 'active',
      prLink: null,
      archivedAt: null,
      model: expect.any(String),
    });
    // Another project cannot see the job.
    expect((await call(sim, 'GET', `/v2/agent/proj-2/job/${String(ok.json.id)}`)).status).toBe(404);
    sim.advanceTime(1000);
    const okNow = await call(sim, 'GET', `/v2/agent/proj-1/job/${String(ok.json.id)}`);
    expect(okNow.json.status).toBe('completed');
    expect(String(okNow.json.prLink)).toMatch(/^https:\/\/github\.com\/acme\/proj-1-docs\/pull\/\d+$/);
    const badNow = await call(sim, 'GET', `/v2/agent/proj-1/job/${String(bad.json.id)}`);
    expect(badNow.json).toMatchObject({ status: 'failed', prLink: null });

    const archived = await call(sim, 'POST', `/v2/agent/proj-1/job/${String(ok.json.id)}/archive`);
    expect(archived.json).toMatchObject({ status: 'archived', archivedAt: expect.any(String) });
    const msg = await call(sim, 'POST', `/v2/agent/proj-1/job/${String(ok.json.id)}/message`, {
      prompt: 'more',
    });
    expect(msg.status).toBe(409);
  });

  it('429 with Retry-After and the vendor text after N creations per project per hour', async () => {
    const project = 'proj-limit';
    for (let i = 0; i < 3; i++)
      expect((await call(sim, 'POST', `/v2/agent/${project}/job`, { prompt: 'x' })).status).toBe(201);
    const limited = await call(sim, 'POST', `/v2/agent/${project}/job`, { prompt: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe('Too many sessions created. Please try again later.');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Rejected attempts do not count, other projects are unaffected, and the window slides.
    expect((await call(sim, 'POST', '/v2/agent/proj-other/job', { prompt: 'x' })).status).toBe(201);
    sim.advanceTime(retryAfter * 1000);
    expect((await call(sim, 'POST', `/v2/agent/${project}/job`, { prompt: 'x' })).status).toBe(201);
    expect(sim.agentJobsCreated(project)).toBe(4);
  });

  it('429 after N admin requests per key per minute when asked to limit them like the vendor', async () => {
    const limited = await startSimulator({ requestsPerMinute: 3, nonEnterpriseKeys: ['mint_starter_2'] });
    try {
      for (let i = 0; i < 3; i++)
        expect((await call(limited, 'GET', '/v1/static-export/jobs/se_nope')).status).toBe(404);
      const refused = await call(limited, 'GET', '/v1/static-export/jobs/se_nope');
      expect(refused.status).toBe(429);
      expect(refused.json.error).toBe('Too many requests. Please try again later.');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Each key has its own budget, and the window slides.
      expect((await call(limited, 'GET', '/v2/agent/p/job/x', undefined, 'mint_starter_2')).status).toBe(404);
      limited.advanceTime(retryAfter * 1000);
      expect((await call(limited, 'GET', '/v1/static-export/jobs/se_nope')).status).toBe(404);
    } finally {
      await limited.close();
    }
  });

  it('follow-up messages restart an agent job', async () => {
    const job = await call(sim, 'POST', '/v2/agent/proj-m/job', { prompt: 'x' });
    sim.advanceTime(1000);
    const msg = await call(sim, 'POST', `/v2/agent/proj-m/job/${String(job.json.id)}/message`, {
      prompt: 'again',
    });
    expect(msg.status).toBe(200);
    expect(msg.json.status).toBe('active');
    expect((await call(sim, 'POST', `/v2/agent/proj-m/job/${String(job.json.id)}/message`, {})).status).toBe(
      400,
    );
  });

  it('applies status, malformed, reset and delay faults per endpoint without side effects', async () => {
    sim.configure({ faults: ['start:503:1', 'agent-create:malformed:1'] });
    const before = sim.exportJobsStarted();
    const res = await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' });
    expect(res.status).toBe(503);
    expect(sim.exportJobsStarted()).toBe(before);
    const raw = await fetch(`${sim.baseUrl}/v2/agent/p/job`, { method: 'POST', body: '{}' });
    expect(raw.status).toBe(200);
    await expect(raw.json()).rejects.toThrow();
    sim.configure({ faults: ['agent-get:reset:1'] });
    await expect(fetch(`${sim.baseUrl}/v2/agent/p/job/x`)).rejects.toThrow();
    sim.configure({ faults: ['status:delay=200:1', 'status:404:0'] });
    const t0 = performance.now();
    expect((await call(sim, 'GET', '/v1/static-export/jobs/se_nope')).status).toBe(404);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    const last = sim.requests.at(-1);
    expect(last?.faults).toEqual(['status:delay=200:1']);
  });

  it('configure changes the settings given, keeps the others, and changes nothing when a fault is bad', async () => {
    const own = await startSimulator({ exportDurationMs: 1000, linkTtlSeconds: 60 });
    try {
      expect(() => own.configure({ faults: ['status:nope:1'], exportDurationMs: 5 })).toThrow(
        FaultParseError,
      );
      own.configure({ faults: ['status:503:1'], linkTtlSeconds: 120 });
      const started = await call(own, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' });
      const id = String(started.json.jobId);
      expect((await call(own, 'GET', `/v1/static-export/jobs/${id}`)).status).toBe(503);
      own.configure({ faults: [] });
      own.advanceTime(50);
      // Still the duration it started with (1000 ms): a tenth of it is queued.
      expect((await call(own, 'GET', `/v1/static-export/jobs/${id}`)).json.status).toBe('queued');
      own.advanceTime(1000);
      expect((await call(own, 'GET', `/v1/static-export/jobs/${id}`)).json.status).toBe('completed');
      const bundle = await call(own, 'POST', `/v1/static-export/jobs/${id}/bundle`);
      expect(Date.parse(String(bundle.json.expiresAt)) - own.now()).toBeGreaterThan(60_000);
      expect(Date.parse(String(bundle.json.expiresAt)) - own.now()).toBeLessThanOrEqual(120_000);
    } finally {
      await own.close();
    }
  });

  it('records requests without auth headers', () => {
    expect(sim.requests.length).toBeGreaterThan(10);
    for (const r of sim.requests) {
      expect(Object.keys(r).sort()).toEqual(
        expect.arrayContaining(['durationMs', 'endpoint', 'method', 'path', 'status', 'time']),
      );
      expect(JSON.stringify(r)).not.toContain(sim.adminKey);
    }
  });
});
