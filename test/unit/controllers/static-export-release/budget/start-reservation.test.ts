// A start's claim on the hourly start budget is a reservation: spent once the request went out
// (whatever the platform answered: a job, 409, 429, a gateway's 502), given back on every other path
// (the per-minute limiter deferred the call, the status write conflicted or failed, the platform
// refused the request itself), by the skeleton. And what a restarted operator needs is in status:
// after a 429, a new leader seeded from the releases' status sends no start before the hold ends.
// The real reconciler and skeleton, the production client against the simulator (revision 2); the
// Kubernetes API is a stand-in holding the release and its key Secret.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminApiClient, ExportStartLimitError } from '../../../../../src/api/index.ts';
import { ApiClients } from '../../../../../src/controllers/credentials.ts';
import { budgetGroup } from '../../../../../src/controllers/static-export-release/budget/recorded-starts.ts';
import { StartBudgets } from '../../../../../src/controllers/static-export-release/budget/start-budget.ts';
import { seedFrom } from '../../../../../src/controllers/static-export-release/budget/start-budget-seed.ts';
import { StaticExportReleaseReconciler } from '../../../../../src/controllers/static-export-release/release-reconciler.ts';
import { SharedExports } from '../../../../../src/controllers/static-export-release/share/shared-exports.ts';
import type { StaticExportRelease, StaticExportReleaseStatus } from '../../../../../src/crd/index.ts';
import { createLogger } from '../../../../../src/log.ts';
import { KubeApiError, type KubeClient } from '../../../../../src/runtime/kube-client.ts';
import { type Simulator, startSimulator } from '../../../../../src/simulator/index.ts';
import { release } from '../../../../support/fixtures/release-fixtures.ts';

const project = (n: number) => `6520f3a1c9b1a20012ae${String(n).padStart(4, '0')}`;
const logger = createLogger({ level: 'silent' });

let sim: Simulator;
beforeAll(async () => {
  // Jobs stay running: a second start of a project meets its 409.
  sim = await startSimulator({ apiRevision: 2, exportDurationMs: 3_600_000 });
});
afterAll(async () => {
  await sim.close();
});
afterEach(() => {
  sim.configure({ faults: [] });
});

type Apply = (status: StaticExportReleaseStatus) => void;

/** One operator: its budgets, clients and reconciler, over a Kubernetes stand-in holding `releases`. */
function operator(
  releases: StaticExportRelease[],
  opts: { budgets?: StartBudgets; requestsPerMinute?: number; apply?: Apply } = {},
) {
  const budgets = opts.budgets ?? new StartBudgets();
  const clients = new ApiClients({
    logger,
    apiBaseUrl: sim.baseUrl,
    allowInsecureApiBaseUrl: true,
    retry: { attempts: 1 },
    ...(opts.requestsPerMinute ? { requestsPerMinute: opts.requestsPerMinute } : {}),
  });
  const byName = new Map(releases.map((r) => [r.metadata.name, r]));
  const notFound = (path: string) => new KubeApiError(404, 'NotFound', `${path} not found`);
  let version = 1;
  const kube = {
    get: async (path: string) => {
      if (path.endsWith('/secrets/key'))
        return { metadata: { name: 'key' }, data: { apiKey: Buffer.from(sim.adminKey).toString('base64') } };
      const r = byName.get(path.split('/').at(-1) ?? '');
      if (path.includes('/staticexportreleases/') && r) return r;
      throw notFound(path);
    },
    request: async (_method: string, path: string) => {
      throw notFound(path);
    },
    create: async (_path: string, body: unknown) => body,
    apply: async (path: string, body: { status: StaticExportReleaseStatus }) => {
      opts.apply?.(body.status);
      const name = path.split('/').at(-2) ?? '';
      const r = byName.get(name);
      if (r) {
        version++;
        byName.set(name, {
          ...r,
          metadata: { ...r.metadata, resourceVersion: String(version) },
          status: body.status,
        });
      }
      return { metadata: { resourceVersion: String(version) } };
    },
  } as unknown as KubeClient;
  const reconciler = new StaticExportReleaseReconciler({
    kube,
    clients,
    events: { emit: async () => {} },
    logger,
    cache: {} as never,
    shared: new SharedExports(),
    budgets,
    labelledWorkloads: () => false,
  });
  const client = clients.get({ baseUrl: sim.baseUrl, apiKey: sim.adminKey, secret: 'web/key' });
  const group = budgetGroup(undefined, client.keyId).name;
  return {
    budgets,
    client,
    group,
    reconcile: (name: string) => reconciler.reconcile('web', name),
    stored: (name: string) => byName.get(name) as StaticExportRelease,
    close: () => clients.close(),
  };
}

function current(name: string, projectId: string, basePath?: string): StaticExportRelease {
  const r = release({
    spec: { domain: undefined, projectId, ...(basePath === undefined ? {} : { basePath }) },
  });
  return { ...r, metadata: { ...r.metadata, name, resourceVersion: '1' } };
}

const startsOf = (p: string) =>
  sim.requests.filter((q) => q.endpoint === 'start' && q.path.includes(p)).map((q) => q.status);

describe('a reserved start slot', () => {
  it('is given back when the per-minute limiter defers the call: nothing sent, nothing marked', async () => {
    const p = project(1);
    const op = operator([current('deferred', p)], { requestsPerMinute: 1 });
    try {
      // The one request of this minute is spent: the start would wait for the limiter.
      await op.client
        .readExport({ revision: 'current', jobId: '6520f3a1c9b1a20012ab0000', projectId: p })
        .catch(() => {});
      const result = await op.reconcile('deferred');
      expect(result.requeueAfterMs).toBeGreaterThan(0);
      expect(startsOf(p)).toEqual([]);
      expect(op.budgets.remaining(op.group)).toBe(10);
      expect(op.stored('deferred').status?.start).toBeUndefined();
    } finally {
      await op.close();
    }
  });

  it.each([
    [
      'the status write conflicts (someone changed the release)',
      new KubeApiError(409, 'Conflict', 'changed'),
    ],
    ['the status write fails', new KubeApiError(500, 'InternalError', 'etcd down')],
  ])('is given back when %s: nothing sent', async (what, error) => {
    const p = project(what.includes('conflict') ? 2 : 3);
    const op = operator([current('unwritten', p)], {
      apply: () => {
        throw error;
      },
    });
    try {
      const outcome = await op.reconcile('unwritten').then(
        (r) => r,
        (e: unknown) => e,
      );
      if (error.status === 409) expect(outcome).toEqual({ requeueAfterMs: 0 });
      else expect(outcome).toBe(error);
      expect(startsOf(p)).toEqual([]);
      expect(op.budgets.remaining(op.group)).toBe(10);
    } finally {
      await op.close();
    }
  });

  it('is given back when the platform refuses the request itself (400): it started nothing, and no start is recorded', async () => {
    const p = project(4);
    sim.configure({ faults: [`start@${p}:400:1`] });
    const op = operator([current('refused', p)]);
    try {
      await op.reconcile('refused');
      expect(startsOf(p)).toEqual([400]);
      expect(op.budgets.remaining(op.group)).toBe(10);
      const status = op.stored('refused').status;
      expect(status?.start).toBeUndefined();
      expect(status?.recentStarts ?? []).toEqual([]);
    } finally {
      await op.close();
    }
  });

  it('stays spent once the request went out: a job, a 409, a 502 after the job may exist; each recorded in status', async () => {
    const started = project(5);
    const busy = project(6);
    const gateway = project(7);
    // Another client's job keeps `busy` active: the operator's start meets 409.
    const other = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
    await other.startExport({ projectId: busy });
    await other.close();
    sim.configure({ faults: [`start@${gateway}:502:1`] });
    const op = operator([current('started', started), current('busy', busy), current('gateway', gateway)]);
    try {
      for (const name of ['started', 'busy', 'gateway']) await op.reconcile(name);
      expect([startsOf(started), startsOf(busy), startsOf(gateway)]).toEqual([[202], [202, 409], [502]]);
      expect(op.budgets.remaining(op.group)).toBe(7);
      for (const name of ['started', 'busy', 'gateway'])
        expect(op.stored(name).status?.recentStarts).toHaveLength(1);
      // The gateway's answer proves nothing: the mark stays (StartOutcomeUnknown), no second start.
      expect(op.stored('gateway').status?.start).toBeDefined();
      await op.reconcile('gateway');
      expect(startsOf(gateway)).toEqual([502]);
    } finally {
      await op.close();
    }
  });
});

describe('a start met by a 409 on a release serving a link', () => {
  it('looks again at the link’s renewal, not after the whole wait: the link written does not expire', async () => {
    const p = project(40);
    const other = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
    await other.startExport({ projectId: p });
    await other.close();
    const now = sim.now();
    const serving = {
      ...current('serving', p),
      status: {
        current: {
          version: 'v1',
          jobId: '6520f3a1c9b1a20012ab0040',
          projectId: p,
          expiresAt: new Date(now + 8 * 60_000).toISOString(),
          renewalTime: new Date(now + 3 * 60_000).toISOString(),
        },
      },
    };
    const op = operator([serving]);
    try {
      const result = await op.reconcile('serving');
      expect(startsOf(p)).toEqual([202, 409]);
      expect(op.stored('serving').status?.waiting?.reason).toBe('ExportBusy');
      // The 409 is waited out 20 minutes; the renewal is due in 3.
      expect(result.requeueAfterMs).toBeGreaterThan(2 * 60_000);
      expect(result.requeueAfterMs).toBeLessThanOrEqual(3 * 60_000);
    } finally {
      await op.close();
    }
  });
});

describe('releases of one project with different base paths', () => {
  it("wait for each other's job without a start request, naming the other", async () => {
    const p = project(30);
    const op = operator([current('root', p, ''), current('docs', p, '/docs')]);
    try {
      await op.reconcile('root');
      await op.reconcile('docs');
      // One start: the second would only have met the first's 409 (and spent a start).
      expect(startsOf(p)).toEqual([202]);
      const waiting = op.stored('docs').status?.waiting;
      expect(waiting).toMatchObject({ reason: 'ExportBusy', sibling: 'web/root' });
      expect(waiting?.message).toMatch(/of release web\/root, the same project with another base path/);
      expect(op.budgets.remaining(op.group)).toBe(9);
    } finally {
      await op.close();
    }
  });
});

describe('a restart after the platform refused a start (429)', () => {
  it('holds the group until the hold recorded in status ends: the new leader sends no start', async () => {
    // Another cluster of the organization spends the rest of the hour (last in this file: it
    // leaves the organization none).
    const other = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
    for (let i = 0; ; i++) {
      const refused = await other.startExport({ projectId: project(100 + i) }).then(
        () => false,
        (e: unknown) => e instanceof ExportStartLimitError,
      );
      if (refused) break;
    }
    await other.close();
    const first = current('first', project(20));
    const second = current('second', project(21));
    const before = operator([first, second]);
    try {
      await before.reconcile('first');
    } finally {
      await before.close();
    }
    expect(startsOf(project(20))).toEqual([429]);
    const recorded = before.stored('first');
    // The refused start is among the recorded starts, and the hold's end is in status.
    expect(recorded.status?.recentStarts).toHaveLength(1);
    const refusedUntil = Date.parse(recorded.status?.waiting?.refusedUntil ?? '');
    expect(refusedUntil).toBeGreaterThan(Date.now() + 30 * 60_000);

    // The next leader: fresh budgets seeded from the releases' status, as release-setup.ts does.
    const budgets = new StartBudgets();
    const after = operator([recorded, second], { budgets });
    try {
      seedFrom(budgets, after.group, recorded);
      seedFrom(budgets, after.group, second);
      await after.reconcile('second');
      await after.reconcile('first');
      expect(startsOf(project(21))).toEqual([]);
      expect(startsOf(project(20))).toEqual([429]);
      const waiting = after.stored('second').status?.waiting;
      expect(waiting?.reason).toBe('WaitingForStartBudget');
      expect(Date.parse(waiting?.until ?? '')).toBeGreaterThanOrEqual(refusedUntil);
      expect(waiting?.refusedUntil).toBe(new Date(refusedUntil).toISOString());
    } finally {
      await after.close();
    }
  });
});
