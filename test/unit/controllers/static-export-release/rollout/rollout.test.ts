// Re-rolling the workloads that serve a release: which roll, when, and how their rollout is judged.
import { describe, expect, it } from 'vitest';
import * as exportFolds from '../../../../../src/controllers/static-export-release/export/publish-content.ts';
import type {
  Observed,
  PlatformObserved,
  Status,
} from '../../../../../src/controllers/static-export-release/release-model.ts';
import {
  afterRoll,
  desiredAnnotations,
  type Roll,
  rolloutStep,
} from '../../../../../src/controllers/static-export-release/rollout/rollout.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../../../../../src/crd/index.ts';
import {
  RENEWED_AT_ANNOTATION,
  type RolloutProgress,
  rolloutProgress,
  type Workload,
  type WorkloadObject,
} from '../../../../../src/targets/workloads.ts';
import { decided as decide, folded } from '../../../../support/fixtures/committed.ts';
import {
  at,
  MIN,
  NOW,
  release as platformRelease,
  servingV1,
  V1,
  V2,
} from '../../../../support/fixtures/release-fixtures.ts';

const afterPublish = folded(exportFolds.afterPublish);

const VERSION = 'staticexport.dev/version';

const release = (status: Status, spec: Record<string, unknown> = {}) => platformRelease({ status, spec });

type Current = NonNullable<Status['current']>;

/** Serving `version`; the last rollout as given. */
const serving = (current: Partial<Current> = {}): Status => servingV1({}, current);

const done: RolloutProgress = { state: 'done' };
const workload = (
  name: string,
  annotations: Record<string, string>,
  progress: RolloutProgress = done,
  kind: Workload['kind'] = 'Deployment',
): Workload => ({ kind, name, generation: 3, annotations, progress });

const rolledOut = (version = V1, extra: Partial<NonNullable<Current['rollout']>> = {}) => ({
  version,
  startedAt: at(-50 * MIN),
  completedAt: at(-49 * MIN),
  workloads: [{ kind: 'Deployment' as const, name: 'site', generation: 2 }],
  ...extra,
});

const observed = (
  r: StaticExportRelease,
  workloads?: Workload[],
  extra: Partial<PlatformObserved> = {},
): Observed => ({
  source: 'platform',
  now: NOW,
  release: r,
  ...(workloads ? { workloads } : {}),
  ...extra,
});

const ready = (s: Status) => s.conditions?.find((c) => c.type === 'Ready');

describe('which workloads roll', () => {
  it('rolls a workload that does not carry the served version, with only the version annotation', () => {
    const r = release(serving({ rollout: rolledOut(V2) }));
    const d = decide(
      observed(r, [workload('site', { [VERSION]: V2 }), workload('other', { [VERSION]: V1 })]),
    );
    expect(d.action).toEqual({
      kind: 'roll',
      reason: 'NewVersion',
      workloads: [{ kind: 'Deployment', name: 'site' }],
      annotations: { [VERSION]: V1 },
    });
  });

  it('does not roll when every workload carries the served version (identical content, steady state)', () => {
    const r = release(serving({ rollout: rolledOut() }));
    const d = decide(observed(r, [workload('site', { [VERSION]: V1, other: 'kept' })]));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.events).toEqual([]);
    expect(ready(d.status)).toMatchObject({ status: 'True', reason: 'Published' });
  });

  it('does not roll without workloads, and not before anything is served', () => {
    expect(rolloutStep(release(serving()), [], NOW)).toBeUndefined();
    expect(rolloutStep(release({}), [workload('site', {})], NOW)).toBeUndefined();
    expect(desiredAnnotations(release({}))).toBeUndefined();
  });

  it('does not roll a suspended release, nor one being deleted', () => {
    const stale = [workload('site', {})];
    expect(decide(observed(release(serving(), { suspend: true }), stale)).action).toEqual({ kind: 'none' });
    const deleting = release(serving());
    deleting.metadata.deletionTimestamp = at(-1_000);
    expect(decide(observed(deleting, stale)).action).toEqual({ kind: 'none' });
  });

  it('never rolls for a version the publish gate refused: the workloads keep the served one', () => {
    const refused = serving({ rollout: rolledOut() });
    refused.export = { ...refused.export, publishGateFailure: 'it has 0 pages, fewer than the minimum of 1' };
    const d = decide(observed(release(refused), [workload('site', { [VERSION]: V1 })]));
    expect(d.action).toEqual({ kind: 'none' });
    expect(ready(d.status)?.reason).toBe('PublishGateFailed');
  });

  it('a workload found without the annotations (a fresh install) rolls once, as drift', () => {
    const r = release(serving({ rollout: rolledOut() }));
    const step = rolloutStep(r, [workload('site', { [VERSION]: V1 }), workload('new', {})], NOW);
    expect(step).toMatchObject({
      kind: 'roll',
      reason: 'Drift',
      workloads: [{ kind: 'Deployment', name: 'new' }],
    });
  });

  it('rolls a StatefulSet named in workloadRefs like the chart Deployment', () => {
    const r = release(serving());
    const step = rolloutStep(r, [workload('db-docs', {}, done, 'StatefulSet')], NOW);
    expect(step).toMatchObject({ kind: 'roll', workloads: [{ kind: 'StatefulSet', name: 'db-docs' }] });
  });
});

describe('link renewal', () => {
  const renewed = at(-1_000);

  it('with onLinkRenewal Rollout a renewal rolls, with the renewed-at annotation', () => {
    const r = release(serving({ renewedAt: renewed, rollout: rolledOut() }), {
      rollout: { onLinkRenewal: 'Rollout' },
    });
    const step = rolloutStep(r, [workload('site', { [VERSION]: V1 })], NOW);
    expect(step).toEqual({
      kind: 'roll',
      reason: 'LinkRenewed',
      workloads: [{ kind: 'Deployment', name: 'site' }],
      annotations: { [VERSION]: V1, [RENEWED_AT_ANNOTATION]: renewed },
    });
  });

  it('with None (the default) a renewal does not roll, and the renewed-at already rolled out stays', () => {
    const before = at(-10 * MIN);
    const r = release(serving({ renewedAt: renewed, rollout: rolledOut(V1, { renewedAt: before }) }));
    const carrying = { [VERSION]: V1, [RENEWED_AT_ANNOTATION]: before };
    expect(rolloutStep(r, [workload('site', carrying)], NOW)).toBeUndefined();
    expect(desiredAnnotations(r)).toEqual(carrying);
  });

  it('records each renewal in current.renewedAt and keeps the last rollout across publishes', () => {
    const r = release(serving({ rollout: rolledOut() }));
    const out = { jobId: 'se_1', version: V1, expiresAt: new Date(NOW.getTime() + 90 * MIN), wrote: true };
    const renewedStatus = afterPublish(observed(r), { ...out, mode: 'Renew' }).status;
    expect(renewedStatus.current).toMatchObject({ renewedAt: NOW.toISOString(), rollout: rolledOut() });
    const published = afterPublish(observed(r), { ...out, mode: 'NewContent', jobId: 'se_2', version: V2 });
    expect(published.status.current).toMatchObject({ version: V2, rollout: rolledOut() });
    expect(published.status.current?.renewedAt).toBeUndefined();
  });
});

describe('after a roll', () => {
  const roll: Roll = {
    kind: 'roll',
    reason: 'NewVersion',
    workloads: [{ kind: 'Deployment', name: 'site' }],
    annotations: { [VERSION]: V2 },
  };

  it('records what was rolled with the generation it produced, and says so', () => {
    const out = afterRoll(
      release(serving({ version: V2, rollout: rolledOut() })),
      roll,
      [{ kind: 'Deployment', name: 'site', generation: 4 }],
      NOW,
    );
    expect(out.current.rollout).toEqual({
      version: V2,
      startedAt: NOW.toISOString(),
      workloads: [{ kind: 'Deployment', name: 'site', generation: 4 }],
    });
    expect(out.events).toEqual([
      { type: 'Normal', reason: 'RollingOut', note: `Rolling Deployment/site to ${V2}` },
    ]);
  });

  it('a workload joining a rollout of the same version is added to it', () => {
    const rec = {
      version: V2,
      startedAt: at(-5_000),
      workloads: [{ kind: 'Deployment' as const, name: 'a', generation: 2 }],
    };
    const out = afterRoll(
      release(serving({ version: V2, rollout: rec })),
      { ...roll, reason: 'Drift' },
      [{ kind: 'Deployment', name: 'b', generation: 7 }],
      NOW,
    );
    expect(out.current.rollout?.workloads.map((w) => w.name)).toEqual(['a', 'b']);
  });
});

describe('watching a rollout', () => {
  const rolling = (startedAgoMs: number, extra = {}) =>
    serving({
      rollout: {
        version: V1,
        startedAt: at(-startedAgoMs),
        workloads: [{ kind: 'Deployment', name: 'site', generation: 3 }],
        ...extra,
      },
    });
  const carrying = { [VERSION]: V1 };

  it('polls a young rollout every second and stays Ready meanwhile', () => {
    const d = decide(
      observed(release(rolling(2_000)), [
        workload('site', carrying, { state: 'progressing', message: '1 of 2 replicas updated' }),
      ]),
    );
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.requeueAfterMs).toBe(1_000);
    expect(ready(d.status)).toMatchObject({ status: 'True', reason: 'Published' });
  });

  it('marks it complete once every workload is rolled out, with a RolledOut event', () => {
    const d = decide(observed(release(rolling(5_000)), [workload('site', carrying)]));
    expect(d.status.current?.rollout?.completedAt).toBe(NOW.toISOString());
    expect(d.events).toEqual([
      { type: 'Normal', reason: 'RolledOut', note: `Rolled out ${V1} to Deployment/site` },
    ]);
    // renewal in 20 min is the next thing to do
    expect(d.requeueAfterMs).toBe(20 * MIN);
  });

  it('reports a rollout not complete within spec.rollout.timeout: Ready=False RolloutStalled, one Warning', () => {
    const r = release(rolling(3 * MIN), { rollout: { timeout: '2m' } });
    const pending = [
      workload('site', carrying, { state: 'progressing', message: '0 of 2 updated replicas available' }),
    ];
    const d = decide(observed(r, pending));
    expect(ready(d.status)).toMatchObject({
      status: 'False',
      reason: 'RolloutStalled',
      message: expect.stringContaining(
        'Deployment/site (0 of 2 updated replicas available) not rolled out within spec.rollout.timeout 2m',
      ),
    });
    expect(d.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'RolloutStalled' })]);
    expect(d.requeueAfterMs).toBe(30_000);
    // Once reported it is not announced again, and keeps being watched.
    const again = decide(observed(release(d.status, { rollout: { timeout: '2m' } }), pending));
    expect(again.events).toEqual([]);
    expect(ready(again.status)?.reason).toBe('RolloutStalled');
  });

  it('waits until the timeout before calling it stalled', () => {
    const r = release(rolling(90_000), { rollout: { timeout: '2m' } });
    const d = decide(observed(r, [workload('site', carrying, { state: 'progressing', message: 'x' })]));
    expect(ready(d.status)?.status).toBe('True');
    expect(d.requeueAfterMs).toBe(5_000);
  });

  it('reports the Deployment controller giving up (ProgressDeadlineExceeded) at once', () => {
    const d = decide(
      observed(release(rolling(10_000)), [
        workload('site', carrying, {
          state: 'failed',
          message: 'ReplicaSet "site-1" has timed out progressing.',
        }),
      ]),
    );
    expect(ready(d.status)).toMatchObject({
      reason: 'RolloutStalled',
      message: expect.stringContaining('Deployment/site: ReplicaSet "site-1" has timed out progressing.'),
    });
  });

  it('a stalled rollout that completes later turns Ready again', () => {
    const stalledStatus = rolling(20 * MIN, { stalled: 'Deployment/site (…) not rolled out' });
    const d = decide(observed(release(stalledStatus), [workload('site', carrying)]));
    expect(ready(d.status)).toMatchObject({ status: 'True', reason: 'Published' });
    expect(d.status.current?.rollout?.stalled).toBeUndefined();
  });

  it('a new version replaces a stalled rollout by rolling again', () => {
    const stalledStatus = rolling(20 * MIN, { stalled: 'stuck' });
    const r = release({ ...stalledStatus, current: { ...stalledStatus.current, version: V2 } });
    expect(decide(observed(r, [workload('site', carrying)])).action).toMatchObject({
      kind: 'roll',
      reason: 'NewVersion',
    });
  });
});

describe('workloadRefs', () => {
  it('a reference to a workload that does not exist is reported, naming the field and the fix', () => {
    const r = release(serving());
    const d = decide(observed(r, [], { missingWorkloads: [{ kind: 'Deployment', name: 'gone' }] }));
    expect(ready(d.status)).toMatchObject({
      status: 'False',
      reason: 'WorkloadNotFound',
      message:
        'spec.rollout.workloadRefs names Deployment/gone, not found in namespace web: create it or remove the reference',
    });
    expect(d.failure?.retryAfterMs).toBe(60_000);
  });

  it('the schema takes Deployment and StatefulSet only, and defaults the rollout settings', () => {
    const parse = (rollout: unknown) =>
      staticExportReleaseSpecSchema.safeParse({
        domain: 'docs.example.com',
        credentialsSecretRef: { name: 'key' },
        target: { valuesSecret: { name: 'values' } },
        rollout,
      });
    expect(parse(undefined).data?.rollout).toEqual({
      onNewContent: 'Rollout',
      onLinkRenewal: 'None',
      timeout: '10m',
    });
    expect(parse({ workloadRefs: [{ kind: 'DaemonSet', name: 'x' }] }).success).toBe(false);
    expect(parse({ onNewContent: 'Swap' }).success).toBe(false);
    const bad = parse({ timeout: 'soon' });
    expect(bad.error?.issues[0]?.message).toBe(
      'spec.rollout.timeout must be a duration such as 30s, 15m, 1h or 1h30m',
    );
  });
});

describe('rollout progress of a workload (kubectl rollout status rules)', () => {
  const deployment = (status: WorkloadObject['status'], generation = 2, replicas = 2): WorkloadObject => ({
    metadata: { name: 'site', generation },
    spec: { replicas },
    status,
  });

  it('a Deployment: generation observed, all updated, old ones gone, all available', () => {
    expect(rolloutProgress('Deployment', deployment({ observedGeneration: 1 }))).toEqual({
      state: 'progressing',
      message: 'waiting for generation 2 to be observed',
    });
    const base = { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 };
    expect(rolloutProgress('Deployment', deployment({ ...base, updatedReplicas: 1, replicas: 3 }))).toEqual({
      state: 'progressing',
      message: '1 of 2 replicas updated',
    });
    expect(rolloutProgress('Deployment', deployment({ ...base, replicas: 3 }))).toEqual({
      state: 'progressing',
      message: '1 old replicas pending termination',
    });
    expect(rolloutProgress('Deployment', deployment({ ...base, availableReplicas: 1 }))).toEqual({
      state: 'progressing',
      message: '1 of 2 updated replicas available',
    });
    expect(rolloutProgress('Deployment', deployment(base))).toEqual({ state: 'done' });
  });

  it('a Deployment past its progress deadline has failed', () => {
    const status = {
      observedGeneration: 2,
      conditions: [
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' },
      ],
    };
    expect(rolloutProgress('Deployment', deployment(status))).toEqual({
      state: 'failed',
      message: 'timed out',
    });
  });

  it('a StatefulSet: ready replicas and revisions; a partition counts; OnDelete has nothing to wait for', () => {
    const sts = (status: WorkloadObject['status'], spec: WorkloadObject['spec'] = {}): WorkloadObject => ({
      metadata: { name: 'db', generation: 1 },
      spec: { replicas: 3, ...spec },
      status: { observedGeneration: 1, ...status },
    });
    expect(rolloutProgress('StatefulSet', sts({ readyReplicas: 2 }))).toMatchObject({ state: 'progressing' });
    expect(
      rolloutProgress(
        'StatefulSet',
        sts({ readyReplicas: 3, updatedReplicas: 1, currentRevision: 'a', updateRevision: 'b' }),
      ),
    ).toEqual({ state: 'progressing', message: '1 of 3 replicas updated' });
    expect(
      rolloutProgress('StatefulSet', sts({ readyReplicas: 3, currentRevision: 'b', updateRevision: 'b' })),
    ).toEqual({ state: 'done' });
    const partitioned = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } };
    expect(rolloutProgress('StatefulSet', sts({ updatedReplicas: 1 }, partitioned))).toEqual({
      state: 'done',
    });
    expect(rolloutProgress('StatefulSet', sts({}, { updateStrategy: { type: 'OnDelete' } }))).toEqual({
      state: 'done',
    });
  });
});
