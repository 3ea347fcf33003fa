// The CLI's part of the hourly start budget, through the real CLI and the production client against
// the simulator in revision 2: a start that may have created its job is said to, recorded and not
// repeated; the budget follows the group (not the URL), with a share of the hour; 409s are probes
// that count and are bounded; overlapping `mirror sync` runs share one record without losing
// starts; --project-id is held to spec.projectId's pattern. Waits of minutes run on a fast clock
// (test/support/tools/fast-clock.ts) in the CLI and the simulator alike.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyGroup } from '../../../src/cli/start-record.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { fastClock, fastClockEnv } from '../../support/tools/fast-clock.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';
import { call } from '../simulator/helpers.ts';

const HOUR = 3_600_000;
let work: string;
let dirs = 0;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'start-budget-cli-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

interface Recorded {
  group?: string;
  project?: string;
  key?: string;
  at: string;
  site: string;
  outcome?: string;
}

/** A scratch directory with mirror.yaml naming `sites` (projectIds) and, given `starts`, a starts record. */
async function setup(sites: string[], starts: Recorded[] = [], concurrency = 1) {
  const dir = join(work, `run${dirs++}`);
  await mkdir(dir);
  const config = join(dir, 'mirror.yaml');
  // Port 1: nothing listens; the registry side is not what these tests are about.
  await writeFile(
    config,
    `target: oci://127.0.0.1:1/docs\nconcurrency: ${concurrency}\ndomains:\n${sites.map((s) => `  - projectId: ${s}\n`).join('')}`,
  );
  const startsFile = join(dir, '.static-export-starts.json');
  if (starts.length > 0) await writeFile(startsFile, JSON.stringify({ starts }));
  return { dir, config, startsFile };
}

const recorded = async (file: string) =>
  (JSON.parse(await readFile(file, 'utf8')) as { starts: Recorded[]; blocks?: unknown[] }).starts;

const startsOf = (sim: Simulator, project?: string) =>
  sim.requests.filter(
    (r) =>
      r.method === 'POST' &&
      (project === undefined
        ? /^\/v1\/static-export\/[^/]+\/jobs$/.test(r.path)
        : r.path === `/v1/static-export/${project}/jobs`),
  );

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

describe('on the real clock', () => {
  let sim: Simulator;
  let api: Record<string, string>;
  let group: string;
  beforeAll(async () => {
    sim = await startSimulator({ apiRevision: 2, exportDurationMs: 0 });
    api = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
    group = keyGroup(sim.adminKey);
  });
  afterEach(() => {
    sim.configure({ faults: [] });
    sim.advanceTime(HOUR);
  });
  afterAll(() => sim.close());

  it('says plainly that a start answered 5xx or cut off after sending may have created the job, and does not start again', async () => {
    for (const [project, fault, code] of [
      ['gateway', '502', 6],
      ['cutoff', 'reset', 6],
      // A 2xx the client cannot read: the job was created; exit 9 as for any invalid answer.
      ['garbled', 'malformed', 9],
    ] as const) {
      sim.configure({ faults: [`start@${project}:${fault}:1`] });
      const result = await runCli(['export', '--project-id', project], api);
      expect(result.code, result.stderr).toBe(code);
      expect(result.stderr).toContain(`the export start of project ${project} was answered`);
      expect(result.stderr).toContain(
        'the export job may exist and run. It is not started again in this run',
      );
      expect(result.stderr).not.toMatch(/try again later|usually temporary/i);
      // One start: the CLI did not send a second.
      expect(startsOf(sim, project)).toHaveLength(1);
    }
  });

  it('records a start that may have created its job in --starts-file (it spends the slot)', async () => {
    sim.configure({ faults: ['start@maybe:created=503:1'] }); // the job is created, then 503
    const { config, startsFile } = await setup(['maybe']);
    const result = await runCli(['mirror', 'sync', '--config', config], api);
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toContain('the export job may exist and run');
    expect((await recorded(startsFile)).map((s) => [s.site, s.outcome, s.group])).toEqual([
      ['project maybe', 'unknown', group],
    ]);
  });

  it('gives up on a busy project at once when the next probe would come after --timeout, exit 6', async () => {
    sim.configure({ exportDurationMs: 60_000 });
    expect((await call(sim, 'POST', '/v1/static-export/stuck/jobs', {})).status).toBe(202);
    const { config, startsFile } = await setup(['stuck']);
    const exported = await runCli(['export', '--project-id', 'stuck', '--timeout', '2s'], api);
    expect(exported.code).toBe(6);
    expect(exported.stderr).toMatch(
      /project stuck still had an export queued or running after 1s \(409 on 1 start\(s\)\); the next start would be at \d{4}-.*, after --timeout 2s/,
    );
    const synced = await runCli(['mirror', 'sync', '--config', config, '--timeout', '2s'], api);
    expect(synced.code).toBe(6);
    expect(synced.stderr).toContain(
      'project stuck: failed: project stuck still had an export queued or running',
    );
    // The 409 is recorded: it may have counted.
    expect((await recorded(startsFile)).map((s) => s.outcome)).toEqual(['busy']);
    sim.configure({ exportDurationMs: 0 });
  });

  it('does not start a project again in the run after a start of it that may have created a job', async () => {
    sim.configure({ faults: ['start@twin:502:1'] });
    const { config, startsFile } = await setup([]);
    await writeFile(
      config,
      'target: oci://127.0.0.1:1/docs\nconcurrency: 1\ndomains:\n  - projectId: twin\n' +
        '  - projectId: twin\n    basePath: /docs\n    repository: oci://127.0.0.1:1/docs/twin-docs\n',
    );
    const result = await runCli(['mirror', 'sync', '--config', config, '--json'], api);
    expect(result.code, result.stderr).toBe(6);
    expect(startsOf(sim, 'twin')).toHaveLength(1);
    expect(jsonEvents(result.stdout, 'failed').map((f) => String(f.message))).toEqual([
      expect.stringContaining('the export job may exist and run'),
      expect.stringContaining(
        'not started: an export start of project twin earlier in this run may have created a job',
      ),
    ]);
    expect((await recorded(startsFile)).map((s) => [s.project, s.outcome])).toEqual([['twin', 'unknown']]);
  });

  it('refuses a --project-id (or STATIC_EXPORT_PROJECT_ID) that is not a project id before any request', async () => {
    const before = sim.requests.length;
    for (const id of ['..', '.', 'a/b', 'x%2F..']) {
      const flag = await runCli(['export', '--project-id', id], api);
      expect(flag.code, flag.stderr).toBe(2);
      expect(flag.stderr).toContain(`--project-id "${id}" is not a project id: 1 to 64 letters, digits`);
    }
    const env = await runCli(['export'], { ...api, STATIC_EXPORT_PROJECT_ID: '..' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('STATIC_EXPORT_PROJECT_ID ".." is not a project id');
    expect(sim.requests.length).toBe(before);
  });

  it('counts one budget per key whatever URL names the platform, and --starts-group carries it across keys', async () => {
    const five = Array.from({ length: 5 }, (_, i) => ({ group, at: ago(10 + i), site: `project p${i}` }));
    const { config } = await setup(['solo'], five);
    const port = new URL(sim.baseUrl).port;
    // localhost and a trailing slash: the same organization, the same budget.
    const other = await runCli(['mirror', 'sync', '--config', config, '--json'], {
      ...api,
      STATIC_EXPORT_API_URL: `http://localhost:${port}/`,
    });
    expect(jsonEvents(other.stdout, 'plan')[0]).toMatchObject({ startsGroup: group, startsUsed: 5 });

    // A named group: a rotated key keeps counting the group's starts.
    const full = Array.from({ length: 10 }, (_, i) => ({
      group: 'docs-pipeline',
      at: ago(20 + i),
      site: `project q${i}`,
    }));
    const named = await setup(['rotated'], full);
    const before = startsOf(sim).length;
    const rotated = await runCli(
      ['mirror', 'sync', '--config', named.config, '--starts-group', 'docs-pipeline', '--json'],
      { ...api, STATIC_EXPORT_API_KEY: `${sim.adminKey}rotated` },
    );
    expect(rotated.code, rotated.stderr).toBe(8);
    expect(jsonEvents(rotated.stdout, 'plan')[0]).toMatchObject({
      startsGroup: 'docs-pipeline',
      startsUsed: 10,
    });
    expect(startsOf(sim).length).toBe(before);

    const bad = await runCli(
      ['mirror', 'sync', '--config', named.config, '--starts-group', 'Docs_Pipeline'],
      api,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--starts-group.*lowercase name/);
  });

  it('keeps to --starts-per-hour, the group share of the hour', async () => {
    const { config, startsFile } = await setup(['s1', 's2', 's3', 's4'], [{ group, at: ago(5), site: 'x' }]);
    const before = startsOf(sim).length;
    const result = await runCli(
      ['mirror', 'sync', '--config', config, '--starts-per-hour', '3', '--json'],
      api,
    );
    expect(jsonEvents(result.stdout, 'plan')[0]).toMatchObject({
      startsUsed: 1,
      startsPerHour: 3,
      starting: [{ projectId: 's1' }, { projectId: 's2' }],
    });
    expect(startsOf(sim).length - before).toBe(2);
    expect(jsonEvents(result.stdout, 'waiting').map((w) => w.projectId)).toEqual(['s3', 's4']);
    expect(await recorded(startsFile)).toHaveLength(3);
    const tooMany = await runCli(['mirror', 'sync', '--config', config, '--starts-per-hour', '11'], api);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain('--starts-per-hour');
  });

  it('loses no start when two runs share the record at once, and together keep to the share', async () => {
    // Two runs, three sites each, one record: every start made is recorded.
    const a = await setup(['a1', 'a2', 'a3'], [], 3);
    const startsFile = a.startsFile;
    const b = await setup(['b1', 'b2', 'b3'], [], 3);
    const before = startsOf(sim).length;
    const runs = await Promise.all(
      [a, b].map((s) => runCli(['mirror', 'sync', '--config', s.config, '--starts-file', startsFile], api)),
    );
    for (const run of runs) expect(run.stderr).not.toContain('--starts-file');
    expect(startsOf(sim).length - before).toBe(6);
    expect(await recorded(startsFile)).toHaveLength(6);

    // With a share of 8, 6 recorded already: two more starts between both runs, no 429.
    sim.advanceTime(1000);
    const c = await setup(['c1', 'c2', 'c3'], [], 3);
    const d = await setup(['d1', 'd2', 'd3'], [], 3);
    const middle = startsOf(sim).length;
    await Promise.all(
      [c, d].map((s) =>
        runCli(
          ['mirror', 'sync', '--config', s.config, '--starts-file', startsFile, '--starts-per-hour', '8'],
          api,
        ),
      ),
    );
    const made = startsOf(sim).slice(middle);
    expect(made.map((r) => r.status)).toEqual([202, 202]);
    expect(await recorded(startsFile)).toHaveLength(8);
  });
});

describe('on a fast clock (a minute is a second)', () => {
  const SPEED = 60;
  let sim: Simulator;
  let api: Record<string, string>;
  let group: string;
  beforeAll(async () => {
    sim = await startSimulator({ apiRevision: 2, exportDurationMs: 0, clock: fastClock(SPEED) });
    api = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey, ...fastClockEnv(SPEED) };
    group = keyGroup(sim.adminKey);
  });
  afterEach(() => {
    sim.configure({ exportDurationMs: 0, faults: [] });
    sim.advanceTime(2 * HOUR);
  });
  afterAll(() => sim.close());

  it('probes a project busy past --timeout 4 times, not every minute, and stops when the hour allows no more', async () => {
    // 45 minutes: longer than --timeout 30m with room for a slow start of the CLI.
    sim.configure({ exportDurationMs: 45 * 60_000 });
    expect((await call(sim, 'POST', '/v1/static-export/foreign/jobs', {})).status).toBe(202);
    const result = await runCli(['export', '--project-id', 'foreign', '--timeout', '30m'], api);
    expect(result.code, result.stderr).toBe(6);
    expect(startsOf(sim, 'foreign').map((r) => r.status)).toEqual([202, 409, 409, 409, 409]);
    expect(result.stderr).toContain(
      'project foreign already has an export queued or running (409): starting again in 1m00s',
    );
    expect(result.stderr).toMatch(
      /project foreign still had an export queued or running after \d+m\d*s? \(409 on 4 start\(s\)\).*tried 4 times an hour at most/,
    );
  }, 60_000);

  it('waits out an export of the project already running (409), starting again once it has ended', async () => {
    // The first start meets the running export (409), the one a minute later finds the project free.
    sim.configure({ faults: ['start@shared:409:1:1'] });
    const result = await runCli(['export', '--project-id', 'shared', '--poll-interval', '1s'], api);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'project shared already has an export queued or running (409): starting again in 1m00s (waiting at most --timeout 30m)',
    );
    expect(startsOf(sim, 'shared').map((r) => r.status)).toEqual([409, 202]);
  }, 60_000);

  it('counts each 409 as a start in --starts-file and starts the busy project once it is free', async () => {
    sim.configure({ faults: ['start@busy:409:1:1'] });
    const eight = Array.from({ length: 8 }, (_, i) => ({ group, at: ago(5 + i), site: `project e${i}` }));
    const { config, startsFile } = await setup(['busy', 'later'], eight);
    const result = await runCli(['mirror', 'sync', '--config', config, '--json'], api);
    expect(jsonEvents(result.stdout, 'busy')[0]).toMatchObject({ projectId: 'busy', retryInMs: 60_000 });
    expect(startsOf(sim, 'busy').map((r) => r.status)).toEqual([409, 202]);
    // The 409 took a slot: 8 + 409 + start is the hour's 10, so `later` waits.
    expect(jsonEvents(result.stdout, 'waiting').map((w) => w.projectId)).toEqual(['later']);
    const starts = await recorded(startsFile);
    expect(starts).toHaveLength(10);
    expect(starts.slice(-2).map((s) => [s.site, s.outcome])).toEqual([
      ['project busy', 'busy'],
      ['project busy', 'started'],
    ]);
  }, 60_000);
});
