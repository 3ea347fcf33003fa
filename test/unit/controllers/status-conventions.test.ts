// The status conventions Flux, kstatus and Argo CD read, for both kinds: Reconciling=True while
// work is under way and absent otherwise, Stalled present only when True, observedGeneration
// following the spec, and Flux's reconcile request annotation. (The same states through the real
// kstatus library and the Argo CD health check: test/integration/operator/status-conventions.test.ts.)
import { describe, expect, it } from 'vitest';
import type { Status as JobStatus } from '../../../src/controllers/agent-job/agent-job-model.ts';
import type { Failure } from '../../../src/controllers/failures.ts';
import * as exportFolds from '../../../src/controllers/static-export-release/export/publish-content.ts';
import * as startFolds from '../../../src/controllers/static-export-release/export/start-export.ts';
import type { Status } from '../../../src/controllers/static-export-release/release-model.ts';
import { type AgentJob, RECONCILE_REQUEST_ANNOTATION } from '../../../src/crd/index.ts';
import type { Workload } from '../../../src/targets/workloads.ts';
import { decided as decide, jobDecided as decideJob, folded } from '../../support/fixtures/committed.ts';
import {
  at,
  MIN,
  NOW,
  observed,
  release,
  servingV1,
  V1,
  V2,
} from '../../support/fixtures/release-fixtures.ts';

const afterPublish = folded(exportFolds.afterPublish);
const afterStart = folded(startFolds.afterStart);

const serving = (overrides: Partial<Status> = {}): Status => ({
  ...servingV1({ generation: 1 }),
  ...overrides,
});

const inFlight = (base: Status = {}): Status => ({
  ...base,
  export: { jobId: 'se_2', state: 'running', progress: 0, startedAt: at(-2_000), generation: 1 },
});

type WithConditions = { conditions?: { type: string; status: string; reason: string }[] };
const types = (s: WithConditions) => (s.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
const condition = (s: WithConditions, type: string) => s.conditions?.find((c) => c.type === type);

const stalledKey: Failure = {
  reason: 'AuthenticationFailed',
  message: 'The admin API rejected the key',
  stalled: true,
  retryAfterMs: 5 * MIN,
};

describe('StaticExportRelease conditions', () => {
  it('Reconciling=True while exporting; gone, with Stalled never stored False, once served', () => {
    const exporting = decide(
      observed(release({ status: inFlight() }), { poll: { kind: 'job', state: 'running' } }),
    );
    expect(condition(exporting.status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Exporting' });
    expect(types(exporting.status)).toEqual(['Exporting=True', 'Ready=False', 'Reconciling=True']);

    const published = afterPublish(
      observed(
        release({
          status: { ...exporting.status, export: { ...exporting.status.export, state: 'completed' } },
        }),
      ),
      {
        mode: 'NewContent',
        jobId: 'se_2',
        version: V2,
        expiresAt: new Date(NOW.getTime() + 60 * MIN),
        wrote: true,
      },
    );
    expect(types(published.status)).toEqual(['Exporting=False', 'Ready=True']);
  });

  it('Reconciling=True right after a start, with the generation observed', () => {
    const r = release({ generation: 3, status: serving() });
    const { status } = afterStart(observed(r), 'se_2', 'queued');
    expect(status.observedGeneration).toBe(3);
    expect(condition(status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Exporting' });
  });

  it('Reconciling=True while the workloads roll out; Stalled=True (no Reconciling) once the rollout stalls', () => {
    const rollout = {
      version: V1,
      startedAt: at(-5_000),
      workloads: [{ kind: 'Deployment', name: 'site', generation: 2 }],
    };
    const rolling: Workload = {
      kind: 'Deployment',
      name: 'site',
      generation: 2,
      annotations: { 'staticexport.dev/version': V1 },
      progress: { state: 'progressing', message: '1 of 2 replicas updated' },
    };
    const r = release({ status: serving({ current: { ...serving().current, rollout } }) });
    const d = decide(observed(r, { workloads: [rolling], targetDrifted: false }));
    expect(condition(d.status, 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'RollingOut',
      message: `Rolling out ${V1} to Deployment/site`,
    });
    expect(condition(d.status, 'Ready')?.status).toBe('True');
    expect(condition(d.status, 'Stalled')).toBeUndefined();

    const stuck = { ...rolling, progress: { state: 'failed' as const, message: 'ProgressDeadlineExceeded' } };
    const s = decide(observed(release({ status: d.status }), { workloads: [stuck], targetDrifted: false }));
    expect(condition(s.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'RolloutStalled' });
    expect(condition(s.status, 'Reconciling')).toBeUndefined();
    expect(condition(s.status, 'Ready')).toMatchObject({ status: 'False', reason: 'RolloutStalled' });

    const fine = { ...rolling, progress: { state: 'done' as const } };
    const back = decide(observed(release({ status: s.status }), { workloads: [fine], targetDrifted: false }));
    expect(types(back.status)).toEqual(['Exporting=False', 'Ready=True']);
  });

  it('a failure the user must fix: Stalled=True and no Reconciling, even with an export in flight', () => {
    const d = decide(observed(release({ status: inFlight() }), { blocked: stalledKey }));
    expect(condition(d.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'AuthenticationFailed' });
    expect(condition(d.status, 'Reconciling')).toBeUndefined();
  });

  it('a passing failure while exporting: the export goes on (Reconciling), nothing Stalled', () => {
    const unavailable: Failure = {
      reason: 'ApiUnavailable',
      message: 'The admin API call failed: 503',
      stalled: false,
    };
    const d = decide(
      observed(release({ status: inFlight() }), { poll: { kind: 'failed', failure: unavailable } }),
    );
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'ApiUnavailable' });
    expect(condition(d.status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Exporting' });
    expect(condition(d.status, 'Stalled')).toBeUndefined();
  });

  it('a new release blocked before its first export still observes its generation (kstatus: Failed, not InProgress)', () => {
    const d = decide(observed(release({ status: { observedGeneration: -1 } }), { blocked: stalledKey }));
    expect(d.status.observedGeneration).toBe(1);
    expect(condition(d.status, 'Stalled')?.status).toBe('True');
  });

  it('a spec change is not observed until its export starts, even when an older export publishes meanwhile', () => {
    const r = release({ generation: 2, status: inFlight(serving()) });
    const polled = decide(observed(r, { poll: { kind: 'job', state: 'running' } }));
    expect(polled.status.observedGeneration).toBe(1);
    const done = { ...polled.status, export: { ...polled.status.export, state: 'completed' } };
    const published = afterPublish(observed(release({ generation: 2, status: done })), {
      mode: 'NewContent',
      jobId: 'se_2',
      version: V2,
      expiresAt: new Date(NOW.getTime() + 60 * MIN),
      wrote: true,
    });
    expect(published.status.observedGeneration).toBe(1);
    expect(decide(observed(release({ generation: 2, status: published.status }))).action).toEqual({
      kind: 'start',
      reason: 'SpecChanged',
    });
  });

  it('a pinned release observes its spec changes without exporting', () => {
    const pinned = { pinnedVersion: V1 };
    const d = decide(
      observed(release({ generation: 5, spec: pinned, status: serving() }), { targetDrifted: false }),
    );
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.observedGeneration).toBe(5);
  });

  it('suspended: nothing is reconciling any more and the spec is observed', () => {
    const exporting = decide(
      observed(release({ status: inFlight() }), { poll: { kind: 'job', state: 'running' } }),
    );
    const d = decide(observed(release({ generation: 2, spec: { suspend: true }, status: exporting.status })));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.observedGeneration).toBe(2);
    expect(condition(d.status, 'Reconciling')).toBeUndefined();
  });
});

describe("Flux's reconcile.fluxcd.io/requestedAt", () => {
  const requested = (value: string, status: Status) =>
    release({ annotations: { [RECONCILE_REQUEST_ANNOTATION]: value }, status });

  it('a new value starts an export, recorded in status.lastHandledReconcileAt; the same value does not', () => {
    const r = requested('2026-11-22T11:59:00Z', serving());
    expect(decide(observed(r)).action).toEqual({ kind: 'start', reason: 'Requested' });
    const { status } = afterStart(observed(r), 'se_2', 'queued');
    expect(status.lastHandledReconcileAt).toBe('2026-11-22T11:59:00Z');
    expect(status.lastHandledRequestedAt).toBeUndefined();
    const handled = serving({ lastHandledReconcileAt: '2026-11-22T11:59:00Z' });
    expect(
      decide(observed(requested('2026-11-22T11:59:00Z', handled), { targetDrifted: false })).action,
    ).toEqual({
      kind: 'none',
    });
  });

  it('waits for an export in flight, then starts', () => {
    const r = requested('again', inFlight(serving()));
    expect(decide(observed(r, { poll: { kind: 'job', state: 'running' } })).action).toEqual({ kind: 'none' });
  });

  it('a pinned release records it as handled without exporting', () => {
    const r = release({
      spec: { pinnedVersion: V1 },
      annotations: { [RECONCILE_REQUEST_ANNOTATION]: 'now' },
      status: serving(),
    });
    const d = decide(observed(r, { targetDrifted: false }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.lastHandledReconcileAt).toBe('now');
  });
});

describe('AgentJob conditions', () => {
  const job = (
    status?: JobStatus,
    opts: { generation?: number; annotations?: Record<string, string> } = {},
  ): AgentJob => ({
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'AgentJob',
    metadata: {
      name: 'fix-typo',
      namespace: 'docs',
      generation: opts.generation ?? 1,
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: {
      projectId: 'proj-1',
      prompt: 'Fix the typo',
      credentialsSecretRef: { name: 'key', key: 'apiKey' },
    },
    ...(status ? { status } : {}),
  });
  const remote = (status: string, extra: Record<string, unknown> = {}) => ({
    id: 'aj_1',
    status,
    createdAt: at(-5_000),
    prLink: null,
    ...extra,
  });
  const obs = (j: AgentJob, extra: Record<string, unknown> = {}) => ({
    now: NOW,
    job: j,
    budgetDelayMs: 0,
    ...extra,
  });
  const running: JobStatus = { observedGeneration: 1, jobId: 'aj_1', state: 'active', createdAt: at(-5_000) };

  it('Reconciling=True while creating and running, with the generation observed', () => {
    const creating = decideJob(obs(job({ observedGeneration: -1 })));
    expect(creating.status.observedGeneration).toBe(1);
    expect(condition(creating.status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Creating' });
    const d = decideJob(obs(job(running), { poll: { kind: 'job', job: remote('active') } }));
    expect(types(d.status)).toEqual(['Ready=False', 'Reconciling=True']);
    expect(condition(d.status, 'Reconciling')).toMatchObject({
      reason: 'Running',
      message: 'Agent job aj_1 is active',
    });
  });

  it('completed: Ready=True and neither Reconciling nor Stalled', () => {
    const d = decideJob(
      obs(job(running), {
        poll: { kind: 'job', job: remote('completed', { prLink: 'https://github.com/acme/docs/pull/7' }) },
      }),
    );
    expect(types(d.status)).toEqual(['Ready=True']);
  });

  it('failed: Stalled=True and no Reconciling', () => {
    const d = decideJob(obs(job(running), { poll: { kind: 'job', job: remote('failed') } }));
    expect(types(d.status)).toEqual(['Ready=False', 'Stalled=True']);
  });

  it('waiting for the shared budget is progress (Reconciling), not a stall', () => {
    const d = decideJob(obs(job({ observedGeneration: -1 }), { budgetDelayMs: 60_000 }));
    expect(condition(d.status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'WaitingForBudget' });
    expect(condition(d.status, 'Stalled')).toBeUndefined();
  });

  it('a key refused before the job exists: Stalled=True with the generation observed', () => {
    const d = decideJob(obs(job({ observedGeneration: -1 }), { blocked: stalledKey }));
    expect(d.status.observedGeneration).toBe(1);
    expect(types(d.status)).toEqual(['Ready=False', 'Stalled=True']);
  });

  it('a finished job observes later spec changes and records the reconcile request it was asked', () => {
    const done = decideJob(obs(job(running), { poll: { kind: 'job', job: remote('completed') } })).status;
    const d = decideJob(
      obs(job(done, { generation: 2, annotations: { [RECONCILE_REQUEST_ANNOTATION]: 'now' } })),
    );
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.observedGeneration).toBe(2);
    expect(d.status.lastHandledReconcileAt).toBe('now');
  });
});
