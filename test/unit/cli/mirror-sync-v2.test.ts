// `mirror sync` with mirror.yaml sites of the current API revision (projectId): the run starts at
// most what the hour's 10 starts leave after the starts its group recorded in --starts-file, the
// others wait (exit 8, each told when), a 429 stops every start after it. (The start budget's finer
// points, 409s and overlapping runs: start-budget-cli.test.ts.) Through the production client
// against the simulator in revision 2; the
// registry is an in-memory stand-in (in process) or unreachable (the CLI), as the registry side is
// the tools tests' subject.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminApiClient } from '../../../src/api/index.ts';
import { StartPlan, StartWaiting } from '../../../src/cli/start-plan.ts';
import { keyGroup, StartRecord } from '../../../src/cli/start-record.ts';
import { digestOf } from '../../../src/oci/content.ts';
import { ANNOTATIONS } from '../../../src/oci/image.ts';
import type { RegistryClient } from '../../../src/oci/registry.ts';
import { parseSyncConfig, type SyncEvent, syncDomains } from '../../../src/oci/sync.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';
import { call } from '../simulator/helpers.ts';

const HOUR = 3_600_000;
let sim: Simulator;
let work: string;
let api: Record<string, string>;
/** The admin key's group in the starts record (a digest prefix, never the key). */
let group: string;

beforeAll(async () => {
  sim = await startSimulator({ apiRevision: 2, exportDurationMs: 0 });
  work = await mkdtemp(join(tmpdir(), 'mirror-sync-v2-'));
  api = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
  group = keyGroup(sim.adminKey);
});
afterEach(() => {
  sim.configure({ exportDurationMs: 0 });
  // A fresh hour for the simulator: its 10 starts per key are one test's subject only.
  sim.advanceTime(HOUR);
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

let dirs = 0;
/** A scratch directory with mirror.yaml (`sites` under domains:) and, given `recorded`, a starts record. */
async function setup(
  sites: string[],
  recorded: { group?: string; minutesAgo: number }[] = [],
  concurrency = 1,
) {
  const dir = join(work, `run${dirs++}`);
  await mkdir(dir);
  const config = join(dir, 'mirror.yaml');
  // Port 1: nothing listens; the registry side is not what these tests are about.
  await writeFile(
    config,
    `target: oci://127.0.0.1:1/docs\nconcurrency: ${concurrency}\ndomains:\n${sites.map((s) => `  - ${s}\n`).join('')}`,
  );
  const startsFile = join(dir, '.static-export-starts.json');
  if (recorded.length > 0) {
    const starts = recorded.map((r, i) => ({
      group: r.group ?? group,
      at: new Date(Date.now() - r.minutesAgo * 60_000).toISOString(),
      site: `project earlier${i}`,
    }));
    await writeFile(startsFile, JSON.stringify({ starts }));
  }
  return { dir, config, startsFile };
}

const recordedStarts = async (file: string) =>
  (
    JSON.parse(await readFile(file, 'utf8')) as {
      starts: { group: string; at: string; site: string; outcome?: string }[];
    }
  ).starts;

const projectStarts = () =>
  sim.requests.filter((r) => r.method === 'POST' && /^\/v1\/static-export\/[^/]+\/jobs$/.test(r.path));

/** A registry that keeps manifests in memory: what publishSite needs, nothing sent anywhere. */
function memoryRegistry() {
  const manifests = new Map<string, Buffer>();
  const client = {
    registry: 'memory.test',
    resolve: async (repository: string, reference: string) => {
      const bytes = manifests.get(`${repository}:${reference}`);
      return (
        bytes && {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: digestOf(bytes),
          size: bytes.length,
        }
      );
    },
    pushBlob: async () => 'uploaded' as const,
    putManifest: async (repository: string, reference: string, bytes: Buffer) => {
      manifests.set(`${repository}:${reference}`, bytes);
      return digestOf(bytes);
    },
    close: async () => {},
  } as unknown as RegistryClient;
  return { client, manifests };
}

describe('mirror sync planning (in process)', () => {
  it('starts only what the hour leaves, in mirror.yaml order, records each start and says when the rest may start', async () => {
    const { config, startsFile } = await setup([]);
    const text = `target: oci://memory.test/docs\ndomains:\n  - projectId: alpha\n    basePath: /docs\n  - projectId: beta\n  - projectId: gamma\n  - projectId: delta\n`;
    const { targets } = parseSyncConfig(text, config);
    // 8 of this key's starts in the last hour (the oldest 50 minutes ago), and others' that do not count.
    await writeFile(
      startsFile,
      JSON.stringify({
        starts: [
          ...Array.from({ length: 8 }, (_, i) => ({
            group,
            at: new Date(Date.now() - (50 - i) * 60_000).toISOString(),
            site: 'x',
          })),
          { group: 'other-pipeline', at: new Date().toISOString(), site: 'y' },
          { group, at: new Date(Date.now() - 2 * HOUR).toISOString(), site: 'old' },
        ],
      }),
    );
    const now = Date.now();
    const record = await StartRecord.open(startsFile, group, now);
    const plan = new StartPlan(targets, record, now);
    expect(plan.used).toBe(8);
    expect(plan.starting.map((t) => t.name)).toEqual(['project alpha (base path "/docs")', 'project beta']);
    // gamma waits for the oldest recorded start to leave the hour, delta for the next one.
    expect([...plan.waiting].map(([t, at]) => [t.name, Math.round((at.getTime() - now) / 60_000)])).toEqual([
      ['project gamma', 10],
      ['project delta', 11],
    ]);
    const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
    const registry = memoryRegistry();
    const events: SyncEvent[] = [];
    try {
      const results = await syncDomains({
        api: client,
        registry: async () => registry.client,
        targets,
        tags: ['latest'],
        concurrency: 2,
        pollIntervalMs: 50,
        timeoutMs: 30_000,
        start: (target) =>
          plan.start(target, (site) => client.startExport(site), { timeoutMs: 30_000, onBusy: () => {} }),
        onEvent: (event) => events.push(event),
      });
      expect(results.map((r) => r.ok)).toEqual([true, true, false, false]);
      expect(results.slice(2).map((r) => r.error)).toEqual([
        expect.any(StartWaiting),
        expect.any(StartWaiting),
      ]);
      expect(String((results[2]?.error as Error | undefined)?.message)).toMatch(
        /waits: group key-[0-9a-f]{12} made 8 of the 10 export starts an hour its share allows in the last hour .*the next start for it is possible at \d{4}-/,
      );
    } finally {
      await client.close();
    }
    // Two starts sent, with alpha's base path; the waiting sites never reached the API.
    expect(
      projectStarts()
        .slice(-2)
        .map((r) => [r.path, r.status])
        // Two at once (concurrency 2): in either order.
        .sort(),
    ).toEqual([
      ['/v1/static-export/alpha/jobs', 202],
      ['/v1/static-export/beta/jobs', 202],
    ]);
    expect(
      events.filter((e) => e.event === 'pushed').map((e) => ('projectId' in e ? e.projectId : e.domain)),
    ).toEqual(expect.arrayContaining(['alpha', 'beta']));
    // alpha's export was rendered for its base path, beta's not (the deployment's own applies).
    const jobs = events.flatMap((e) => (e.event === 'started' ? [sim.exportJob(e.jobId)] : []));
    expect(jobs.find((j) => j?.projectId === 'alpha')?.basePath).toBe('/docs');
    expect(jobs.find((j) => j?.projectId === 'beta')?.basePath).not.toBe('/docs');
    const alpha = JSON.parse(registry.manifests.get('docs/alpha:latest')?.toString('utf8') ?? '{}') as {
      annotations: Record<string, string>;
    };
    expect(alpha.annotations[ANNOTATIONS.projectId]).toBe('alpha');
    expect(alpha.annotations).not.toHaveProperty(ANNOTATIONS.domain);
    // The record: this run's two starts added, the start over an hour old dropped, the other group's kept.
    const starts = await recordedStarts(startsFile);
    expect(starts.filter((s) => s.group === group)).toHaveLength(10);
    expect(starts.filter((s) => s.outcome === 'started')).toHaveLength(2);
    expect(starts.map((s) => s.site)).toEqual(
      expect.arrayContaining(['project alpha (base path "/docs")', 'project beta']),
    );
    expect(starts.map((s) => s.site)).not.toContain('old');
    expect(starts.some((s) => s.group === 'other-pipeline')).toBe(true);
    expect(JSON.stringify(starts)).not.toContain(sim.adminKey);
  });
});

describe('static-export mirror sync with projectId sites', () => {
  it('starts nothing when its recorded starts used the hour, names each waiting site and when it may start, exit 8', async () => {
    const { config } = await setup(
      ['projectId: one', 'projectId: two'],
      Array.from({ length: 10 }, (_, i) => ({ minutesAgo: 30 - i })),
    );
    const before = projectStarts().length;
    const human = await runCli(['mirror', 'sync', '--config', config], api);
    expect(human.code, human.stderr).toBe(8);
    expect(human.stderr).toContain(
      `Export starts: group ${group} made 10 of the 10 an hour its share allows in the last hour; 0 projectId site(s) start now, 2 wait (project one, project two)`,
    );
    expect(human.stderr).toMatch(
      /project one: waits: group key-[0-9a-f]{12} made 10 of the 10 export starts .* possible at \d{4}-\d\d-\d\dT[\d:]+Z/,
    );
    expect(human.stderr).toContain(
      'Synced 2 domain(s): 0 pushed, 0 unchanged, 0 failed, 2 waiting for an export start',
    );
    expect(human.stderr).toMatch(
      /2 of 2 site\(s\) wait for an export start \(project one, project two\): the platform allows 10 starts per organization and hour, this group 10; the next is possible at \d{4}-/,
    );
    const json = await runCli(['mirror', 'sync', '--config', config, '--json'], api);
    expect(json.code).toBe(8);
    expect(jsonEvents(json.stdout, 'plan')[0]).toMatchObject({
      startsGroup: group,
      startsUsed: 10,
      startsPerHour: 10,
      starting: [],
    });
    const waiting = jsonEvents(json.stdout, 'waiting');
    expect(waiting.map((w) => [w.projectId, w.reason])).toEqual([
      ['one', 'startBudget'],
      ['two', 'startBudget'],
    ]);
    // The oldest recorded start (30 minutes ago) leaves the hour first: one may start in 30 minutes.
    expect(Date.parse(String(waiting[0]?.notBefore)) - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(Date.parse(String(waiting[0]?.notBefore)) - Date.now()).toBeLessThan(31 * 60_000);
    expect(jsonEvents(json.stdout, 'summary')[0]).toMatchObject({
      waiting: 2,
      failed: 0,
      nextStartAt: waiting[0]?.notBefore,
    });
    expect(projectStarts().length).toBe(before);
  });

  it('stops starting at the first 429 and reports every site after it as waiting, exit 8', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await call(sim, 'POST', `/v1/static-export/filler${i}/jobs`, {})).status).toBe(202);
    }
    // Three at once: the starts still go out one at a time, and none after the 429.
    const { config, startsFile } = await setup(
      ['projectId: first', 'projectId: second', 'projectId: third'],
      [],
      3,
    );
    const before = projectStarts().length;
    const result = await runCli(['mirror', 'sync', '--config', config, '--json'], api);
    expect(result.code, result.stderr).toBe(8);
    // One start refused, none tried after it.
    expect(
      projectStarts()
        .slice(before)
        .map((r) => [r.path, r.status]),
    ).toHaveLength(1);
    expect(projectStarts().at(-1)?.status).toBe(429);
    const waiting = jsonEvents(result.stdout, 'waiting');
    expect(waiting.map((w) => [w.projectId, w.reason]).sort()).toEqual([
      ['first', 'rateLimited'],
      ['second', 'rateLimited'],
      ['third', 'rateLimited'],
    ]);
    expect(waiting[1]?.message).toMatch(
      /^waits: the platform refused an export start \(429\): the organization's 10 starts an hour are used up.*the next is possible at \d{4}-/,
    );
    // The refused start is recorded (it may count), and so is the block: the next run sends nothing.
    expect((await recordedStarts(startsFile)).map((s) => s.outcome)).toEqual(['refused']);
    expect(result.stdout + result.stderr).not.toContain(sim.adminKey);
    const again = await runCli(['mirror', 'sync', '--config', config, '--json'], api);
    expect(again.code, again.stderr).toBe(8);
    expect(jsonEvents(again.stdout, 'waiting').map((w) => w.reason)).toEqual([
      'rateLimited',
      'rateLimited',
      'rateLimited',
    ]);
    expect(projectStarts().length).toBe(before + 1);
  });

  it('refuses a starts record it cannot read or write before any start, exit 2 naming --starts-file', async () => {
    const { config, startsFile } = await setup(['projectId: guarded']);
    const before = projectStarts().length;
    await writeFile(startsFile, '{"starts": "many"}');
    const invalid = await runCli(['mirror', 'sync', '--config', config], api);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(`--starts-file ${startsFile} is not a record of export starts`);
    const unreadable = await runCli(['mirror', 'sync', '--config', config, '--starts-file', work], api);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`--starts-file ${work} is not a regular file`);
    const unwritable = join(work, 'no-such-dir', 'starts.json');
    const missing = await runCli(['mirror', 'sync', '--config', config, '--starts-file', unwritable], api);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /--starts-file \S+no-such-dir\/starts.json cannot be (locked|written).*ENOENT/,
    );
    expect(projectStarts().length).toBe(before);
  });

  it('refuses a site naming both domain and projectId, or neither, naming the entry', async () => {
    const { config } = await setup(['{domain: docs.example.com, projectId: acme}']);
    const both = await runCli(['mirror', 'sync', '--config', config], api);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(
      "domains.0 names both domain and projectId: give exactly one, domain (the contract's API revision) or projectId (the current one)",
    );
  });
});
