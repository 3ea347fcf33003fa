// spec.rollout.onNewContent Sync: nothing rolls; the operator records the version handed to the pods'
// content sync sidecars and reports when every ready pod serves it, or why not.
import { describe, expect, it } from 'vitest';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { syncUnderWay } from '../../../../../src/controllers/static-export-release/rollout/content-sync.ts';
import { podContent } from '../../../../../src/targets/pod-content.ts';
import type { Workload } from '../../../../../src/targets/workloads.ts';
import { decided as decide } from '../../../../support/fixtures/committed.ts';
import {
  at,
  MIN,
  NOW,
  observed,
  release,
  servingV1,
  V1,
  V2,
} from '../../../../support/fixtures/release-fixtures.ts';

type Rollout = NonNullable<NonNullable<Status['current']>['rollout']>;

const syncRelease = (rollout?: Rollout, spec: Record<string, unknown> = {}) =>
  release({
    spec: { rollout: { onNewContent: 'Sync', ...spec } },
    status: servingV1({}, rollout ? { rollout } : {}),
  });

const site = (pods: Workload['pods'], annotations: Record<string, string> = {}): Workload => ({
  kind: 'Deployment',
  name: 'site',
  generation: 4,
  annotations,
  progress: { state: 'done' },
  ...(pods ? { pods } : {}),
});

type Pod = NonNullable<Workload['pods']>[number];
/** A ready pod whose running sidecar reported `served` just now. */
const pod = (name: string, served?: string, extra: Partial<Pod> = {}): Pod => ({
  name,
  syncReady: true,
  since: at(0),
  ...(served ? { served } : {}),
  ...extra,
});

const syncing = (extra: Partial<Rollout> = {}): Rollout => ({
  version: V1,
  via: 'Sync',
  startedAt: at(-10_000),
  workloads: [{ kind: 'Deployment', name: 'site', generation: 4 }],
  ...extra,
});

const ready = (s: Status) => s.conditions?.find((c) => c.type === 'Ready');
const reconciling = (s: Status) => s.conditions?.find((c) => c.type === 'Reconciling');

describe('onNewContent Sync', () => {
  it('defaults to Rollout', () => {
    expect(release().spec.rollout.onNewContent).toBe('Rollout');
  });

  it('never rolls a workload that lacks the version annotation: it records the sync instead', () => {
    const d = decide(observed(syncRelease(), { workloads: [site([pod('p1', 'sha256-old')])] }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.current?.rollout).toEqual({
      version: V1,
      via: 'Sync',
      startedAt: NOW.toISOString(),
      workloads: [{ kind: 'Deployment', name: 'site', generation: 4 }],
    });
    expect(d.events.map((e) => e.reason)).toEqual(['Syncing']);
    expect(reconciling(d.status)).toMatchObject({ status: 'True', reason: 'Syncing' });
    expect(d.requeueAfterMs).toBe(1_000);
  });

  it('records nothing while no workload serves the release', () => {
    const d = decide(observed(syncRelease(), { workloads: [] }));
    expect(d.status.current?.rollout).toBeUndefined();
    expect(d.events).toEqual([]);
  });

  it('waits while some ready pods still serve the old version, saying how many serve the new one', () => {
    const d = decide(
      observed(syncRelease(syncing()), {
        workloads: [site([pod('p1', V1), pod('p2', V2)])],
      }),
    );
    expect(d.status.current?.rollout?.completedAt).toBeUndefined();
    expect(d.status.current?.rollout?.stalled).toBeUndefined();
    expect(d.events).toEqual([]);
    expect(ready(d.status)?.status).toBe('True');
    expect(d.requeueAfterMs).toBe(1_000);
  });

  it('completes once every ready pod serves the version, with a Synced event; then reads no pods', () => {
    const r = syncRelease(syncing());
    expect(syncUnderWay(r)).toBe(true);
    const d = decide(
      observed(r, {
        workloads: [site([pod('p1', V1), pod('p2', V1)])],
      }),
    );
    expect(d.status.current?.rollout?.completedAt).toBe(NOW.toISOString());
    expect(d.events).toEqual([
      { type: 'Normal', reason: 'Synced', note: `Every ready pod of Deployment/site serves ${V1}` },
    ]);
    expect(reconciling(d.status)).toBeUndefined();
    const after = syncRelease(d.status.current?.rollout);
    expect(syncUnderWay(after)).toBe(false);
    expect(decide(observed(after, { workloads: [site(undefined)] })).events).toEqual([]);
  });

  it('reports a pod whose sidecar failed to fetch at once: Ready=False RolloutStalled, the old version still served', () => {
    const failure = `serving ${V2}; ${V1} failed: the bundle has 3 pages, fewer than the minimum of 10`;
    const d = decide(
      observed(syncRelease(syncing()), {
        workloads: [site([pod('p1', V1), pod('p2', V2, { failure })])],
      }),
    );
    const stalled = d.status.current?.rollout?.stalled;
    expect(stalled).toBe(`Deployment/site pod p2: ${failure}`);
    expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'RolloutStalled' });
    expect(ready(d.status)?.message).toContain("see the pod's sync container log");
    expect(d.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'RolloutStalled']]);
    // Reported once: the same cause again records no second event.
    const again = decide(
      observed(syncRelease(d.status.current?.rollout), {
        workloads: [site([pod('p1', V1), pod('p2', V2, { failure })])],
      }),
    );
    expect(again.events).toEqual([]);
  });

  it('scrubs a link a pod condition might carry before it reaches status', () => {
    const failure = `serving ${V2}; ${V1} failed: GET https://cdn.example.com/b.tar.gz?X-Amz-Signature=abc123 refused`;
    const d = decide(observed(syncRelease(syncing()), { workloads: [site([pod('p1', V2, { failure })])] }));
    expect(d.status.current?.rollout?.stalled).not.toContain('abc123');
  });

  it('names a pod that reports nothing (no sidecar) once spec.rollout.timeout passes', () => {
    const d = decide(
      observed(syncRelease(syncing({ startedAt: at(-11 * MIN) })), {
        workloads: [site([pod('p1')])],
      }),
    );
    expect(d.status.current?.rollout?.stalled).toBe(
      'Deployment/site pod p1 reports no served version (does it run the content sync sidecar, staticExport.sync.enabled?), not synced within spec.rollout.timeout 10m',
    );
  });

  describe('what the operator trusts of a report', () => {
    // V1 was published at at(-59 * MIN) (its history entry); spec.rollout.timeout (10m) has passed,
    // so the release says what it still waits for.
    const PUBLISHED = at(-59 * MIN);
    const judged = (
      pods: Workload['pods'],
      status = servingV1({}, { rollout: syncing({ startedAt: at(-11 * MIN) }) }),
    ) =>
      decide(
        observed(release({ spec: { rollout: { onNewContent: 'Sync' } }, status }), {
          workloads: [site(pods)],
        }),
      ).status.current?.rollout;
    const justBefore = new Date(Date.parse(PUBLISHED) - 1_000).toISOString();

    it.each<[string, Partial<Pod>, string | undefined]>([
      ['reported after the publish by a running sidecar: counts', {}, undefined],
      [
        'reported within the second of the publish (condition times are whole seconds): counts',
        { since: PUBLISHED },
        undefined,
      ],
      [
        'reported before the publish (a stale or forged condition): does not count',
        { since: justBefore },
        `Deployment/site pod p1 reports serving ${V1} since ${justBefore}, before it was published at ${PUBLISHED}`,
      ],
      [
        'with no transition time: does not count',
        { since: undefined },
        `Deployment/site pod p1 reports serving ${V1} since an unknown time, before it was published at ${PUBLISHED}`,
      ],
      [
        'its sync container not running and ready (none, crashed, or not started): does not count',
        { syncReady: false },
        `Deployment/site pod p1 reports serving ${V1}, but its sync container is not running and ready`,
      ],
    ])('a pod %s', (_, extra, waiting) => {
      const rollout = judged([pod('p1', V1, extra)]);
      if (waiting === undefined) {
        expect(rollout?.completedAt).toBe(NOW.toISOString());
      } else {
        expect(rollout?.completedAt).toBeUndefined();
        expect(rollout?.stalled).toBe(`${waiting}, not synced within spec.rollout.timeout 10m`);
      }
    });

    it('a publish in the middle of a second counts a report from that second', () => {
      const status = servingV1({}, { rollout: syncing({ startedAt: at(-11 * MIN) }) });
      const mid = new Date(Date.parse(PUBLISHED) + 600).toISOString();
      const rollout = judged([pod('p1', V1, { since: PUBLISHED })], {
        ...status,
        history: [{ version: V1, jobId: 'se_1', appliedAt: mid }],
      });
      expect(rollout?.completedAt).toBe(NOW.toISOString());
    });

    it("without a history entry for the version, the sync record's start is the publish", () => {
      const status = servingV1({}, { rollout: syncing({ startedAt: at(-11 * MIN) }) });
      const { history: _, ...noHistory } = status;
      expect(judged([pod('p1', V1, { since: at(-12 * MIN) })], noHistory)?.completedAt).toBeUndefined();
      expect(judged([pod('p1', V1, { since: at(-11 * MIN) })], noHistory)?.completedAt).toBe(
        NOW.toISOString(),
      );
    });

    it('a failure reported before the publish is about an earlier version: it waits, it does not stall', () => {
      const failure = `serving ${V2}; ${V2} failed: refused`;
      const young = servingV1({}, { rollout: syncing() });
      const stale = judged([pod('p1', V2, { failure, since: justBefore })], young);
      expect(stale?.stalled).toBeUndefined();
      const fresh = judged([pod('p1', V2, { failure })], young);
      expect(fresh?.stalled).toBe(`Deployment/site pod p1: ${failure}`);
    });
  });

  it('a pin to a kept version is a new sync of that version, not a roll', () => {
    const r = release({
      spec: { rollout: { onNewContent: 'Sync' }, pinnedVersion: V2 },
      status: {
        ...servingV1({}, { version: V2, rollout: syncing({ completedAt: at(-MIN) }) }),
        history: [
          { version: V2, jobId: 'se_0', appliedAt: at(-120 * MIN) },
          { version: V1, jobId: 'se_1', appliedAt: at(-59 * MIN) },
        ],
      },
    });
    const d = decide(observed(r, { workloads: [site([pod('p1', V1)])] }));
    expect(d.action.kind).not.toBe('roll');
    expect(d.status.current?.rollout).toMatchObject({ version: V2, via: 'Sync' });
  });
});

describe('what a pod reports serving', () => {
  type Condition = {
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
  };
  type Sidecar = { name: string; ready: boolean; state: object };
  const running: Sidecar = { name: 'sync', ready: true, state: { running: { startedAt: at(-MIN) } } };
  const pod = (conditions: Condition[], deletionTimestamp?: string, sidecars: Sidecar[] = [running]) => ({
    metadata: { name: 'p', ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    status: { conditions: [{ type: 'Ready', status: 'True' }, ...conditions], containerStatuses: sidecars },
  });
  const served = (status: string, message: string): Condition => ({
    type: 'staticexport.dev/ContentServed',
    status,
    reason: status === 'True' ? 'Serving' : 'FetchFailed',
    message,
    lastTransitionTime: at(0),
  });
  const since = at(0);

  it('reads the version of a True condition, when the sidecar changed it, and that the sidecar runs', () => {
    expect(podContent(pod([served('True', `serving ${V1}`)]))).toEqual({
      name: 'p',
      served: V1,
      since,
      syncReady: true,
    });
  });
  it('keeps the served version and the failure of a False one', () => {
    const message = `serving ${V1}; ${V2} failed: expired`;
    expect(podContent(pod([served('False', message)]))).toEqual({
      name: 'p',
      served: V1,
      failure: message,
      since,
      syncReady: true,
    });
  });
  it.each([
    ['no sync container', []],
    ['a sync container not ready', [{ ...running, ready: false }]],
    ['a sync container waiting', [{ ...running, state: { waiting: { reason: 'CrashLoopBackOff' } } }]],
    ['another container ready', [{ ...running, name: 'nginx' }]],
  ])('%s: the sidecar is not counted as running', (_, sidecars) => {
    expect(podContent(pod([served('True', `serving ${V1}`)], undefined, sidecars))?.syncReady).toBe(false);
  });
  it('counts no pod that is not Ready or is going away', () => {
    expect(
      podContent({ metadata: { name: 'p' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
    ).toBeUndefined();
    expect(podContent(pod([served('True', `serving ${V1}`)], at(0)))).toBeUndefined();
  });
  it('a sidecar whose first download failed serves nothing', () => {
    const message = `serving nothing; ${V2} failed: expired`;
    expect(podContent(pod([served('False', message)]))).toEqual({
      name: 'p',
      failure: message,
      since,
      syncReady: true,
    });
  });
  it('a pod without the condition serves nothing it says', () => {
    expect(podContent(pod([]))).toEqual({ name: 'p', syncReady: true });
  });
});
