// What Flux's kstatus library, Argo CD's health check and kubectl make of both kinds, on objects
// read from the real control plane while the operator works on them: InProgress while exporting
// or running, Current when Ready, Failed when stalled, and InProgress before the operator first
// acted on an object (status.observedGeneration -1).
import { describe, expect, it } from 'vitest';
import type { AgentJob, StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import {
  applyAgentJob,
  applyRelease,
  applySecret,
  getAgentJob,
  getRelease,
} from '../../support/cluster/resources.ts';
import { argoHealth, kstatus } from '../../support/tools/status-tools.ts';

const h = useOperatorSuite({
  namespaces: ['kstatus'],
  /** A namespace the operator does not watch: objects there are never reconciled. */
  unwatched: ['kstatus-idle'],
  // Long enough to see the export and the agent job under way.
  sim: { exportDurationMs: 4_000, agentJobDurationMs: 4_000 },
  beforeStart: (s) => applySecret(s.ns, 'revoked', { apiKey: 'mint_revokedkey000000000000000000' }),
});

type Obj = StaticExportRelease | AgentJob;
const condition = (o: Obj, type: string) => o.status?.conditions?.find((c) => c.type === type);
const conditionTypes = (o: Obj) => (o.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();

/** kstatus and Argo CD on one object as read. */
async function verdicts(obj: Obj) {
  const [k] = await kstatus([obj]);
  return { kstatus: k?.status, kstatusMessage: k?.message, argo: await argoHealth(obj) };
}

const watchRelease = (
  name: string,
  what: string,
  test: (r: StaticExportRelease) => boolean,
  timeoutMs = 60_000,
) =>
  eventually(
    `${name}: ${what}`,
    async () => {
      const r = await getRelease(h.ns, name);
      return test(r) ? r : undefined;
    },
    timeoutMs,
  );
const watchJob = (name: string, what: string, test: (j: AgentJob) => boolean) =>
  eventually(`${name}: ${what}`, async () => {
    const j = await getAgentJob(h.ns, name);
    return test(j) ? j : undefined;
  });

describe('before the operator acts on an object', () => {
  it('status.observedGeneration is -1: kstatus says InProgress (not Current), Argo CD Progressing', async () => {
    await applyRelease(h.unwatched[0], 'new');
    await applyAgentJob(h.unwatched[0], 'new', 'proj-k', 'Fix the typo');
    for (const obj of [await getRelease(h.unwatched[0], 'new'), await getAgentJob(h.unwatched[0], 'new')]) {
      expect(obj.status?.observedGeneration, obj.kind).toBe(-1);
      const v = await verdicts(obj);
      expect(v.kstatus, obj.kind).toBe('InProgress');
      expect(v.kstatusMessage).toBe(`${obj.kind} generation is 1, but latest observed generation is -1`);
      expect(v.argo.status, obj.kind).toBe('Progressing');
    }
  });
});

describe('StaticExportRelease', () => {
  it('InProgress while exporting (Reconciling=True), Current when Ready (no Reconciling, no Stalled)', async () => {
    await applyRelease(h.ns, 'site');
    const exporting = await watchRelease(
      'site',
      'Reconciling',
      (r) => condition(r, 'Reconciling')?.status === 'True',
    );
    expect(condition(exporting, 'Reconciling')?.reason).toBe('Exporting');
    expect(exporting.status?.observedGeneration).toBe(1);
    const during = await verdicts(exporting);
    expect(during.kstatus).toBe('InProgress');
    expect(during.argo.status).toBe('Progressing');
    expect(during.argo.message).toMatch(/^Export job \S+ is (queued|running)/);

    const ready = await watchRelease('site', 'Ready', (r) => condition(r, 'Ready')?.status === 'True');
    expect(conditionTypes(ready)).toEqual(['Exporting=False', 'Ready=True']);
    const after = await verdicts(ready);
    expect(after.kstatus).toBe('Current');
    expect(after.argo).toEqual({ status: 'Healthy', message: condition(ready, 'Ready')?.message });
  });

  it("Flux's reconcile.fluxcd.io/requestedAt starts an export, recorded in status.lastHandledReconcileAt", async () => {
    await watchRelease('site', 'Ready', (r) => condition(r, 'Ready')?.status === 'True');
    const before = h.sim.exportJobsStarted();
    const at = new Date().toISOString();
    await kubectlOk([
      'annotate',
      'ser',
      'site',
      '-n',
      h.ns,
      '--overwrite',
      `reconcile.fluxcd.io/requestedAt=${at}`,
    ]);
    const handled = await watchRelease(
      'site',
      'request handled',
      (r) => r.status?.lastHandledReconcileAt === at,
    );
    expect(h.sim.exportJobsStarted()).toBe(before + 1);
    // Handled means the export was started for it: under way, so not Current yet.
    expect(condition(handled, 'Reconciling')?.status).toBe('True');
    expect((await verdicts(handled)).kstatus).toBe('InProgress');
    const done = await watchRelease('site', 'exported again', (r) => !condition(r, 'Reconciling'));
    expect((await verdicts(done)).kstatus).toBe('Current');
    // The same value again asks for nothing.
    await kubectlOk(['annotate', 'ser', 'site', '-n', h.ns, 'note=unrelated']);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(h.sim.exportJobsStarted()).toBe(before + 1);
  });

  it('Failed when stalled (a revoked key: Stalled=True, no Reconciling), Degraded in Argo CD', async () => {
    await applyRelease(h.ns, 'locked', { credentialsSecretRef: { name: 'revoked' } });
    const locked = await watchRelease('locked', 'Stalled', (r) => condition(r, 'Stalled')?.status === 'True');
    expect(condition(locked, 'Stalled')?.reason).toBe('AuthenticationFailed');
    expect(condition(locked, 'Reconciling')).toBeUndefined();
    const v = await verdicts(locked);
    expect(v.kstatus).toBe('Failed');
    expect(v.argo.status).toBe('Degraded');
    expect(v.argo.message).toMatch(/^AuthenticationFailed: The admin API rejected the key in Secret/);
  });
});

describe('AgentJob', () => {
  it('InProgress while running, Current when completed', async () => {
    await applyAgentJob(h.ns, 'fix', 'proj-k', 'Fix the typo');
    const running = await watchJob('fix', 'running', (j) => condition(j, 'Reconciling')?.status === 'True');
    const during = await verdicts(running);
    expect(during.kstatus).toBe('InProgress');
    expect(during.argo.status).toBe('Progressing');

    const done = await watchJob('fix', 'completed', (j) => condition(j, 'Ready')?.status === 'True');
    expect(conditionTypes(done)).toEqual(['Ready=True']);
    const after = await verdicts(done);
    expect(after.kstatus).toBe('Current');
    expect(after.argo.status).toBe('Healthy');
    expect(after.argo.message).toMatch(/^Pull request: https:\/\//);
  });

  it('Failed when the agent failed (Stalled=True), Degraded in Argo CD', async () => {
    await applyAgentJob(h.ns, 'doomed', 'proj-k', 'Please fail at this');
    const failed = await watchJob('doomed', 'failed', (j) => condition(j, 'Stalled')?.status === 'True');
    expect(conditionTypes(failed)).toEqual(['Ready=False', 'Stalled=True']);
    const v = await verdicts(failed);
    expect(v.kstatus).toBe('Failed');
    expect(v.argo.status).toBe('Degraded');
  });
});

describe('kubectl get', () => {
  const table = async (args: string[]) =>
    (await kubectlOk(['get', ...args, '-n', h.ns])).split('\n').map((l) => l.trim().split(/\s{2,}/));

  it('shows Ready, Status (the Ready message) and Age; -o wide adds Version, Renewal, Domain, Project and Repository', async () => {
    const ready = await watchRelease(
      'site',
      'Ready',
      (r) => condition(r, 'Ready')?.status === 'True' && !condition(r, 'Reconciling'),
    );
    const [header, row] = await table(['ser', 'site']);
    expect(header).toEqual(['NAME', 'READY', 'STATUS', 'AGE']);
    expect(row?.slice(0, 3)).toEqual(['site', 'True', condition(ready, 'Ready')?.message]);
    const [wideHeader, wideRow] = await table(['ser', 'site', '-o', 'wide']);
    expect(wideHeader).toEqual([
      'NAME',
      'READY',
      'STATUS',
      'AGE',
      'VERSION',
      'RENEWAL',
      'DOMAIN',
      'PROJECT',
      'REPOSITORY',
    ]);
    // A release by domain has no project nor registry repository: its last columns are empty, so only the first three are compared.
    expect(wideRow?.slice(4, 7)).toEqual([
      ready.status?.current?.version,
      ready.status?.current?.renewalTime,
      'docs.example.com',
    ]);
  });

  it('for agent jobs: Ready, Status and Age; -o wide adds State and PR', async () => {
    const done = await watchJob('fix', 'completed', (j) => condition(j, 'Ready')?.status === 'True');
    const [header, row] = await table(['aj', 'fix']);
    expect(header).toEqual(['NAME', 'READY', 'STATUS', 'AGE']);
    expect(row?.slice(0, 3)).toEqual(['fix', 'True', `Pull request: ${done.status?.prLink}`]);
    const [wideHeader, wideRow] = await table(['aj', 'fix', '-o', 'wide']);
    expect(wideHeader).toEqual(['NAME', 'READY', 'STATUS', 'AGE', 'STATE', 'PR']);
    expect(wideRow?.slice(4)).toEqual(['completed', done.status?.prLink]);
  });
});
