// The simulator serving the static export API's current revision (apiRevision 2), over real HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExportJobV2Schema } from '../../../src/api/schemas.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { call, download, untar } from './helpers.ts';

const jobs = (projectId: string) => `/v1/static-export/${projectId}/jobs`;
const HEX24 = /^[0-9a-f]{24}$/;

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    apiRevision: 2,
    exportDurationMs: 1000,
    nonEnterpriseKeys: ['mint_starter_1'],
    readOnlyKeys: ['mint_readonly_1'],
    unknownProjects: ['elsewhere'],
    projects: {
      acme: { domain: 'acme.docs.example', basePath: '/documentation' },
      off: { exportEnabled: false },
    },
  });
});
afterEach(() => {
  sim.configure({ faults: [] });
  // A fresh hour for each test: the key's 10 starts per hour are the next describe's subject.
  sim.advanceTime(3_600_000);
});
afterAll(() => sim.close());

/** Starts an export of `projectId` and moves the clock past its end; the job id. */
async function finishedJob(projectId: string, body?: unknown): Promise<string> {
  const started = await call(sim, 'POST', jobs(projectId), body);
  expect(started.status).toBe(202);
  sim.advanceTime(1100);
  return String(started.json.jobId);
}

describe('simulator, static export revision 2', () => {
  it('starts a job (202, queued, 24-hex id) and shows it running, then completed with a link', async () => {
    const started = await call(sim, 'POST', jobs('lifecycle'), {});
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ status: 'queued', error: null });
    expect(started.json.jobId).toMatch(HEX24);
    expect(Object.keys(started.json).sort()).toEqual(['createdAt', 'error', 'jobId', 'status', 'updatedAt']);
    const path = `${jobs('lifecycle')}/${String(started.json.jobId)}`;

    sim.advanceTime(500);
    const running = await call(sim, 'GET', path);
    expect(running.status).toBe(200);
    expect(running.json).toMatchObject({ status: 'running', error: null });
    expect(running.json).not.toHaveProperty('progress');
    expect(running.json).not.toHaveProperty('pageCount');
    expect(running.json).not.toHaveProperty('bundleUrl');

    sim.advanceTime(600);
    const done = await call(sim, 'GET', path);
    expect(done.json).toMatchObject({ jobId: started.json.jobId, status: 'completed', error: null });
    // The client reads it with the revision's schema.
    expect(ExportJobV2Schema.parse(done.json).expiresAt).toBeInstanceOf(Date);
    expect(done.json.sizeBytes).toBeGreaterThan(0);
    expect(Date.parse(String(done.json.expiresAt))).toBeGreaterThan(sim.now());
    const bundle = await download(String(done.json.bundleUrl));
    expect(bundle.status).toBe(200);
    expect(bundle.body.length).toBe(done.json.sizeBytes);
  });

  it('gives a fresh, different link on every GET of a completed job; the earlier ones stay valid', async () => {
    const path = `${jobs('fresh')}/${await finishedJob('fresh')}`;
    const links = [];
    for (let i = 0; i < 3; i++) links.push(String((await call(sim, 'GET', path)).json.bundleUrl));
    expect(new Set(links).size).toBe(3);
    for (const link of links) expect((await download(link)).status).toBe(200);
  });

  it('forgets a purged job: its GET and its links answer 404, the project starts again', async () => {
    const jobId = await finishedJob('purged');
    const path = `${jobs('purged')}/${jobId}`;
    const link = String((await call(sim, 'GET', path)).json.bundleUrl);
    expect((await download(link)).status).toBe(200);
    expect(sim.purgeExportJob(jobId)).toBe(true);
    const gone = await call(sim, 'GET', path);
    expect(gone.status).toBe(404);
    expect(gone.json.error).toMatch(/not found/);
    expect((await download(link)).status).toBe(404);
    expect(sim.exportJob(jobId)).toBeUndefined();
    expect(sim.purgeExportJob(jobId)).toBe(false);
    expect((await call(sim, 'POST', jobs('purged'))).status).toBe(202);
  });

  it('names the download <subdomain>-export-<YYYY-MM-DD>.tar.gz', async () => {
    const day = new Date(sim.now()).toISOString().slice(0, 10);
    const jobId = await finishedJob('acme');
    const { json } = await call(sim, 'GET', `${jobs('acme')}/${jobId}`);
    const res = await fetch(String(json.bundleUrl), { method: 'HEAD' });
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="acme-export-${day}.tar.gz"`);
    // Without a configured domain the project id (lowercased) is the subdomain.
    const other = await finishedJob('Other_Project');
    const again = await call(sim, 'GET', `${jobs('Other_Project')}/${other}`);
    const head = await fetch(String(again.json.bundleUrl), { method: 'HEAD' });
    expect(head.headers.get('content-disposition')).toBe(
      `attachment; filename="other_project-export-${day}.tar.gz"`,
    );
  });

  it('answers 404 to the contract’s paths, the bundle call included', async () => {
    const jobId = await finishedJob('contract');
    const bundle = await call(sim, 'POST', `/v1/static-export/jobs/${jobId}/bundle`);
    expect(bundle.status).toBe(404);
    expect((await call(sim, 'GET', `/v1/static-export/jobs/${jobId}`)).status).toBe(404);
    expect((await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' })).status).toBe(404);
  });

  it('409 without a job id while a job of the project is queued or running; other projects may start', async () => {
    const first = await call(sim, 'POST', jobs('busy'));
    expect(first.status).toBe(202);
    const queued = await call(sim, 'POST', jobs('busy'));
    expect(queued.status).toBe(409);
    expect(queued.json).toEqual({ error: expect.stringMatching(/already queued or running/) });
    sim.advanceTime(500);
    expect((await call(sim, 'POST', jobs('busy'))).status).toBe(409);
    expect((await call(sim, 'POST', jobs('busy-too'))).status).toBe(202);
    sim.advanceTime(600);
    // The job's time is up: it completes on this look, and the next start is accepted.
    expect((await call(sim, 'POST', jobs('busy'))).status).toBe(202);
  });

  it('accepts one of two starts of a project sent at once', async () => {
    const both = await Promise.all([call(sim, 'POST', jobs('racing')), call(sim, 'POST', jobs('racing'))]);
    expect(both.map((r) => r.status).sort()).toEqual([202, 409]);
  });

  it('lets a project start again after its job failed', async () => {
    sim.configure({ docsDir: '/nonexistent/docs' });
    const failed = await finishedJob('broken');
    sim.configure({ docsDir: new URL('../../../sample-docs/', import.meta.url).pathname });
    const status = await call(sim, 'GET', `${jobs('broken')}/${failed}`);
    expect(status.json).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Export failed/) });
    expect(status.json).not.toHaveProperty('bundleUrl');
    expect((await call(sim, 'POST', jobs('broken'))).status).toBe(202);
  });

  it('applies the start body’s basePath to the bundle’s links; files stay at the root', async () => {
    const jobId = await finishedJob('based', { basePath: '/docs' });
    expect(sim.exportJob(jobId)).toMatchObject({ projectId: 'based', basePath: '/docs' });
    const { json } = await call(sim, 'GET', `${jobs('based')}/${jobId}`);
    const files = await untar((await download(String(json.bundleUrl))).body);
    const index = files.get('index.html')?.content.toString() ?? '';
    expect(index).toContain('href="/docs/assets/site.css"');
    expect(index).toContain('src="/docs/assets/site.js"');
    expect(index).toContain('<link rel="canonical" href="https://based.docs.example/docs/">');
    expect(index).toContain('href="/docs/guides/install"');
    expect(index).not.toMatch(/(href|src)="\/(?!docs\/)/);
    expect(files.get('sitemap.xml')?.content.toString()).toContain(
      '<loc>https://based.docs.example/docs/guides/install</loc>',
    );
  });

  it('uses the deployment’s configured base path when the body names none, and "" to override it', async () => {
    const configured = await finishedJob('acme');
    const a = await call(sim, 'GET', `${jobs('acme')}/${configured}`);
    const index = (await untar((await download(String(a.json.bundleUrl))).body)).get('index.html');
    expect(index?.content.toString()).toContain('href="/documentation/assets/site.css"');

    const root = await finishedJob('acme', { basePath: '' });
    const b = await call(sim, 'GET', `${jobs('acme')}/${root}`);
    const rootIndex = (await untar((await download(String(b.json.bundleUrl))).body)).get('index.html');
    expect(rootIndex?.content.toString()).toContain('href="/assets/site.css"');
  });

  it.each([
    [{ basePath: '/guides' }],
    [{ basePath: 'docs' }],
    [{ basePath: '/docs/' }],
    [{ basePath: 5 }],
    [['/docs']],
  ])('400 without a body for start body %j, as the latest reference declares it', async (body) => {
    const res = await call(sim, 'POST', jobs('bodies'), body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-length')).toBe('0');
    expect(res.json).toEqual({});
  });

  it('400 for a malformed project id, on start without a body and on get with one', async () => {
    for (const id of ['a.b', 'a%20b', 'x'.repeat(65)]) {
      const start = await call(sim, 'POST', jobs(id));
      expect(start.status, id).toBe(400);
      expect(start.headers.get('content-length'), id).toBe('0');
      const got = await call(sim, 'GET', `${jobs(id)}/6520f3a1c9b1a20012ab34cd`);
      expect(got.status, id).toBe(400);
      expect(got.json.error).toBe('Malformed project id');
    }
  });

  it('401 for a bad key, a plan without static export and a project with export off', async () => {
    for (const [method, path] of [
      ['POST', jobs('keys')],
      ['GET', `${jobs('keys')}/6520f3a1c9b1a20012ab34cd`],
    ] as const) {
      const bad = await call(sim, method, path, undefined, 'mint_wrong');
      expect(bad.status, path).toBe(401);
      expect(bad.headers.get('www-authenticate')).toBe('Bearer');
      const plan = await call(sim, method, path, undefined, 'mint_starter_1');
      expect(plan.status, path).toBe(401);
      expect(plan.json.error).toMatch(/plan/);
    }
    const off = await call(sim, 'POST', jobs('off'));
    expect(off.status).toBe(401);
    expect(off.json.error).toBe('Static export is not enabled for project off');
  });

  it('403 to a start with a key without write permission, which may still look at jobs', async () => {
    const denied = await call(sim, 'POST', jobs('readers'), undefined, 'mint_readonly_1');
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatch(/write permission/);
    const started = await call(sim, 'POST', jobs('readers'));
    const path = `${jobs('readers')}/${String(started.json.jobId)}`;
    expect((await call(sim, 'GET', path, undefined, 'mint_readonly_1')).status).toBe(200);
  });

  it('404 for a project outside the organization and for a job of another or no deployment', async () => {
    // A start's 404 has no body in the latest reference; a look at a job keeps its error text.
    const unknown = await call(sim, 'POST', jobs('elsewhere'));
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-length')).toBe('0');
    const unknownGet = await call(sim, 'GET', `${jobs('elsewhere')}/6520f3a1c9b1a20012ab34cd`);
    expect(unknownGet.status).toBe(404);
    expect(unknownGet.json.error).toMatch(/Project elsewhere not found/);
    const started = await call(sim, 'POST', jobs('mine'));
    const jobId = String(started.json.jobId);
    expect((await call(sim, 'GET', `${jobs('mine')}/${jobId}`)).status).toBe(200);
    expect((await call(sim, 'GET', `${jobs('theirs')}/${jobId}`)).status).toBe(404);
    expect((await call(sim, 'GET', `${jobs('mine')}/000000000000000000000000`)).status).toBe(404);
    const wrong = await call(sim, 'DELETE', jobs('mine'));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  it('applies start and status faults to the revision 2 endpoints', async () => {
    sim.configure({ faults: ['start:503:1:1'] });
    const faulted = await call(sim, 'POST', jobs('faulty'));
    expect(faulted.status).toBe(503);
    const started = await call(sim, 'POST', jobs('faulty'));
    expect(started.status).toBe(202);
    sim.configure({ faults: ['status:500:1:1'] });
    const path = `${jobs('faulty')}/${String(started.json.jobId)}`;
    expect((await call(sim, 'GET', path)).status).toBe(500);
    expect((await call(sim, 'GET', path)).status).toBe(200);
  });

  it('limits a fault to one project’s requests with endpoint@project', async () => {
    const jobId = await finishedJob('target');
    const other = await finishedJob('bystander');
    sim.configure({
      faults: [
        'start@target:503:1',
        'status@target:500:1',
        'download@target:truncate:1',
        'agent-get@target:502:1',
      ],
    });
    expect((await call(sim, 'POST', jobs('target'))).status).toBe(503);
    expect((await call(sim, 'GET', `${jobs('target')}/${jobId}`)).status).toBe(500);
    expect((await call(sim, 'GET', '/v2/agent/target/job/x')).status).toBe(502);
    expect((await call(sim, 'GET', '/v2/agent/bystander/job/x')).status).toBe(404);
    const fine = await call(sim, 'GET', `${jobs('bystander')}/${other}`);
    expect(fine.status).toBe(200);
    const whole = await download(String(fine.json.bundleUrl));
    expect(whole.body.length).toBe(fine.json.sizeBytes);
    // The target's link, fetched with the fault off, then downloaded with it on: cut half-way.
    sim.configure({ faults: [] });
    const link = String((await call(sim, 'GET', `${jobs('target')}/${jobId}`)).json.bundleUrl);
    sim.configure({ faults: ['download@target:truncate:1'] });
    await expect(download(link)).rejects.toThrow();
    expect(sim.requests.at(-1)?.faults).toEqual(['download@target:truncate:1']);
  });
});

describe('simulator, revision 2 start limit', () => {
  let limited: Simulator;
  beforeAll(async () => {
    limited = await startSimulator({ apiRevision: 2, exportDurationMs: 1000, readOnlyKeys: ['mint_ro'] });
  });
  afterAll(() => limited.close());

  it('429 with Retry-After after 10 starts of the organization in a sliding hour, counting accepted starts only', async () => {
    const start = (n: number) => call(limited, 'POST', jobs(`p${n}`));
    for (let n = 0; n < 5; n++) expect((await start(n)).status).toBe(202);
    // Refused starts (409, 403) do not use up the hour's budget.
    expect((await start(0)).status).toBe(409);
    expect((await call(limited, 'POST', jobs('p9'), undefined, 'mint_ro')).status).toBe(403);
    limited.advanceTime(30 * 60_000);
    for (let n = 5; n < 10; n++) expect((await start(n)).status).toBe(202);
    const refused = await start(10);
    expect(refused.status).toBe(429);
    expect(refused.json.error).toBe('Rate limit exceeded. At most 10 job starts per organization per hour.');
    // The oldest of the ten leaves the window 30 minutes from now.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(30 * 60 - 10);
    expect(retryAfter).toBeLessThanOrEqual(30 * 60);
    limited.advanceTime(30 * 60_000);
    expect((await start(10)).status).toBe(202);
    expect((await start(11)).status).toBe(202);
    expect((await start(12)).status).toBe(202);
    expect((await start(13)).status).toBe(202);
    expect((await start(14)).status).toBe(202);
    expect((await start(15)).status).toBe(429);
  });
});

describe('simulator, revision 2: what the start budget meets on the platform', () => {
  const SECOND_KEY = 'mint_secondkeyoftheorg0000';
  let org: Simulator;
  beforeAll(async () => {
    org = await startSimulator({ apiRevision: 2, exportDurationMs: 1000, organizationKeys: [SECOND_KEY] });
  });
  afterEach(() => {
    org.configure({ faults: [] });
    org.advanceTime(3_600_000);
  });
  afterAll(() => org.close());

  it('counts the starts of every key of the organization, a rotated one included, against one hour', async () => {
    for (let n = 0; n < 5; n++) expect((await call(org, 'POST', jobs(`a${n}`))).status).toBe(202);
    for (let n = 0; n < 5; n++) {
      expect((await call(org, 'POST', jobs(`b${n}`), undefined, SECOND_KEY)).status).toBe(202);
    }
    expect((await call(org, 'POST', jobs('a9'))).status).toBe(429);
    expect((await call(org, 'POST', jobs('b9'), undefined, SECOND_KEY)).status).toBe(429);
    // A rotated admin key is still the organization's: its hour is spent too.
    const before = org.adminKey;
    org.configure({ adminKey: 'mint_rotatedkey00000000000' });
    expect((await call(org, 'POST', jobs('c0'))).status).toBe(429);
    org.configure({ adminKey: before });
  });

  it('a start:created=<5xx> fault creates the job and answers 5xx; created=reset drops the connection', async () => {
    org.configure({ faults: ['start:created=502:1:1'] });
    const before = org.exportJobsStarted();
    const gateway = await call(org, 'POST', jobs('gateway'));
    expect(gateway.status).toBe(502);
    expect(org.exportJobsStarted()).toBe(before + 1);
    expect(org.requests.at(-1)?.faults).toEqual(['start:created=502:1:1']);
    // The job runs: the next start meets it.
    expect((await call(org, 'POST', jobs('gateway'))).status).toBe(409);

    org.configure({ faults: ['start:created=reset:1:1'] });
    await expect(call(org, 'POST', jobs('dropped'))).rejects.toThrow();
    expect(org.exportJobsStarted()).toBe(before + 2);
    expect((await call(org, 'POST', jobs('dropped'))).status).toBe(409);
  });

  it('answers an injected 429 in the per-minute limit’s wording, with a short Retry-After, starting nothing', async () => {
    org.configure({ faults: ['start:429:1:1'] });
    const before = org.exportJobsStarted();
    const refused = await call(org, 'POST', jobs('minute'));
    expect(refused.status).toBe(429);
    expect(refused.json.error).toBe('Too many requests. Please try again later.');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(org.exportJobsStarted()).toBe(before);
  });

  it('a start:fail fault starts a job that ends failed', async () => {
    org.configure({ faults: ['start@broken:fail:1'] });
    const started = await call(org, 'POST', jobs('broken'));
    expect(started.status).toBe(202);
    org.advanceTime(1100);
    const failed = await call(org, 'GET', `${jobs('broken')}/${String(started.json.jobId)}`);
    expect(failed.json).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Export failed/) });
    expect(failed.json).not.toHaveProperty('bundleUrl');
    // Other projects' exports are fine.
    const fine = await call(org, 'POST', jobs('healthy'));
    org.advanceTime(1100);
    expect((await call(org, 'GET', `${jobs('healthy')}/${String(fine.json.jobId)}`)).json.status).toBe(
      'completed',
    );
  });

  it('counts 409s toward the hour when told to', async () => {
    const counting = await startSimulator({
      apiRevision: 2,
      exportDurationMs: 1000,
      conflictsCountTowardStartLimit: true,
    });
    try {
      expect((await call(counting, 'POST', jobs('busy'))).status).toBe(202);
      for (let n = 0; n < 9; n++) expect((await call(counting, 'POST', jobs('busy'))).status).toBe(409);
      // One accepted start and nine refused ones: the hour is spent.
      const refused = await call(counting, 'POST', jobs('other'));
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatch(/job starts per organization per hour/);
    } finally {
      await counting.close();
    }
  });
});
