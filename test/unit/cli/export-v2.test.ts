// `static-export export --project-id`: the current API revision through the real CLI against the
// simulator serving it: no progress to show, the hourly start limit (429) an exit of its own that
// writes nothing, and which flags name the site. (A busy project, 409: start-budget-cli.test.ts.)
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';
import { call } from '../simulator/helpers.ts';

let sim: Simulator;
let work: string;
let api: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ apiRevision: 2, exportDurationMs: 1500 });
  work = await mkdtemp(join(tmpdir(), 'cli-export-v2-'));
  api = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
});
afterEach(() => {
  sim.configure({ exportDurationMs: 1500 });
  // A fresh hour: the key's 10 starts per hour are one test's subject only.
  sim.advanceTime(3_600_000);
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Neither the admin key nor any link (`links`) nor a presigned query may appear. */
function expectNoSecrets(text: string, links: string[] = []): void {
  expect(text).not.toContain(sim.adminKey);
  for (const link of links) expect(text).not.toContain(link);
  expect(text).not.toMatch(/[?&](sig|expires|X-Amz-Signature)=/i);
}

describe('static-export export --project-id', () => {
  it('exports the project with its base path, showing elapsed time instead of progress, and writes the values', async () => {
    const out = join(work, 'site');
    const valuesFile = join(work, 'values.yaml');
    const result = await runCli(
      [
        'export',
        '--project-id',
        'acme',
        '--base-path',
        '/docs',
        '--out',
        out,
        '--values-out',
        valuesFile,
        '--poll-interval',
        '100ms',
      ],
      api,
    );
    expect(result.code, result.stderr).toBe(0);
    const values = parse(await readFile(valuesFile, 'utf8')) as {
      staticExport: { bundleUrl: string; version: string };
    };
    expect((await fetch(values.staticExport.bundleUrl, { method: 'HEAD' })).status).toBe(200);
    expect(await readFile(join(out, 'index.html'), 'utf8')).toContain('href="/docs/assets/site.css"');
    expect(result.stderr).toMatch(/Started export [0-9a-f]{24} of project acme \(base path "\/docs"\)/);
    expect(result.stderr).toMatch(/export [0-9a-f]{24}: running, \d+s/);
    // No percentages for the job (the download has its own).
    expect(result.stderr).not.toMatch(/%.*export [0-9a-f]{24}:/);
    expectNoSecrets(result.stdout + result.stderr, [values.staticExport.bundleUrl]);
  });

  it('takes the project from STATIC_EXPORT_PROJECT_ID, and keeps the link out of --json lines with --values-out', async () => {
    const valuesFile = join(work, 'values-json.yaml');
    const result = await runCli(
      ['export', '--json', '--values-out', valuesFile, '--poll-interval', '100ms'],
      {
        ...api,
        STATIC_EXPORT_PROJECT_ID: 'fromenv',
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(jsonEvents(result.stdout, 'started')[0]).toMatchObject({ projectId: 'fromenv' });
    const progress = jsonEvents(result.stdout, 'progress');
    expect(progress.length).toBeGreaterThan(0);
    for (const p of progress) expect(p).not.toHaveProperty('progress');
    const link = (parse(await readFile(valuesFile, 'utf8')) as { staticExport: { bundleUrl: string } })
      .staticExport.bundleUrl;
    expectNoSecrets(result.stdout + result.stderr, [link]);
  });

  it('refuses to guess which site: exactly one of --domain and --project-id, --base-path with a project only', async () => {
    const before = sim.exportJobsStarted();
    const both = await runCli(['export', '--domain', 'docs.example.com', '--project-id', 'acme'], api);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--domain and --project-id both name the site to export');
    const neither = await runCli(['export'], api);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(
      /--domain or --project-id is required \(or set STATIC_EXPORT_PROJECT_ID\)/,
    );
    const basePath = await runCli(['export', '--domain', 'docs.example.com', '--base-path', '/docs'], api);
    expect(basePath.code).toBe(2);
    expect(basePath.stderr).toContain('--base-path applies to an export by --project-id only');
    const unknown = await runCli(['export', '--project-id', 'acme', '--base-path', '/guides'], api);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--base-path "/guides" is not a base path the platform knows');
    expect(sim.exportJobsStarted()).toBe(before);
  });

  it('exits 8 at once on the hourly start limit (429), naming it and the next start, writing nothing', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await call(sim, 'POST', `/v1/static-export/filler${i}/jobs`, {})).status).toBe(202);
    }
    const out = join(work, 'limited-site');
    const valuesFile = join(work, 'limited-values.yaml');
    const args = ['export', '--project-id', 'acme', '--out', out, '--values-out', valuesFile];
    const human = await runCli(args, api);
    expect(human.code).toBe(8);
    expect(human.stderr).toMatch(
      /error: The platform allows 10 export starts per organization per hour, and they are used up \(429 on project acme\); the next start is possible in \d+ s \(at \d{4}-\d\d-\d\dT[\d:]+Z\)/,
    );
    const json = await runCli([...args, '--json'], api);
    expect(json.code).toBe(8);
    expect(jsonEvents(json.stdout, 'error')[0]).toMatchObject({
      exitCode: 8,
      message: expect.stringContaining('10 export starts per organization per hour'),
    });
    expect(await exists(out)).toBe(false);
    expect(await exists(valuesFile)).toBe(false);
    // One start each: the limit is not retried.
    const starts = sim.requests.filter(
      (r) => r.method === 'POST' && r.path === '/v1/static-export/acme/jobs',
    );
    expect(starts.slice(-2).map((r) => r.status)).toEqual([429, 429]);
    expectNoSecrets(human.stdout + human.stderr + json.stdout + json.stderr);
  });
});
