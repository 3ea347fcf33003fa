// The operator process as deployed: killed at each step of an export it resumes without a second
// export job; two replicas elect one leader; the watch survives an API server restart.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ControlPlane } from '../../../scripts/control-plane/control-plane.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { OperatorProcess } from '../../support/cluster/operator-process.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import {
  applyAgentJob,
  applyRelease,
  getAgentJob,
  getRelease,
  requestExport,
} from '../../support/cluster/resources.ts';

const running: OperatorProcess[] = [];
const suite = useOperatorSuite({ namespaces: ['proc'], sim: { exportDurationMs: 3_000 }, operator: false });

afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
  suite.sim.configure({ faults: [] });
});

function operator(leaseNamespace?: string, extraArgs?: string[]): OperatorProcess {
  const p = OperatorProcess.start({
    namespaces: [suite.ns],
    apiBaseUrl: suite.sim.baseUrl,
    ...(leaseNamespace ? { leaseNamespace } : {}),
    ...(extraArgs ? { extraArgs } : {}),
  });
  running.push(p);
  return p;
}

const release = (name: string) => applyRelease(suite.ns, name, { domain: `${name}.example.com` });
const get = (name: string) => getRelease(suite.ns, name);
const ready = (name: string) =>
  eventually(`${name} Ready`, async () => {
    const r = await get(name);
    return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? r : undefined;
  });

describe('SIGKILL at each step', () => {
  const steps: [string, string[], RegExp][] = [
    ['while polling the export job', [], /"action":\{"kind":"none"\},"requeueAfterMs":\d+,"msg":"decided"/],
    ['while generating the bundle link', ['bundle:delay=5000:1'], /"kind":"publish","mode":"NewContent"/],
    ['while downloading the bundle', ['download:delay=5000:1'], /"kind":"publish","mode":"NewContent"/],
  ];
  it.each(steps)('resumes %s without a second export job', async (_step, faults, reached) => {
    const name = `kill-${faults.length ? faults[0]?.split(':')[0] : 'poll'}`;
    suite.sim.configure({ faults });
    const before = suite.sim.exportJobsStarted();
    const first = operator();
    await release(name);
    await eventually('export job id in status', async () => (await get(name)).status?.export?.jobId);
    await first.waitFor(reached);
    await first.kill('SIGKILL');
    suite.sim.configure({ faults: [] });

    operator();
    const r = await ready(name);
    expect(r.status?.current?.jobId).toBe(r.status?.export?.jobId);
    expect(suite.sim.exportJobsStarted() - before).toBe(1);
  });
});

describe('two replicas', () => {
  it('only the leader reconciles; the standby takes over within the lease duration after the leader is killed', async () => {
    const a = operator(suite.ns);
    const b = operator(suite.ns);
    const holder = async () =>
      (
        JSON.parse(
          await kubectlOk(['get', 'lease', 'static-export-operator', '-n', suite.ns, '-o', 'json']),
        ) as {
          spec: { holderIdentity?: string };
        }
      ).spec.holderIdentity;
    const leaderId = await eventually('a leader', async () => (await holder()) || undefined);
    const [leader, standby] = leaderId.endsWith(`-${a.pid}`) ? [a, b] : [b, a];
    expect(leaderId.endsWith(`-${leader.pid}`)).toBe(true);

    const before = suite.sim.exportJobsStarted();
    await release('elected');
    await ready('elected');
    expect(suite.sim.exportJobsStarted() - before).toBe(1);
    expect(leader.lines.some((l) => l.includes('"release":') && l.includes('elected'))).toBe(true);
    expect(standby.lines.some((l) => l.includes('"msg":"decided"'))).toBe(false);

    await leader.kill('SIGKILL');
    const killedAt = Date.now();
    const next = await eventually(
      'standby leads',
      async () => {
        const h = await holder();
        return h?.endsWith(`-${standby.pid}`) ? h : undefined;
      },
      20_000,
    );
    expect(next).toBeTruthy();
    // lease 4 s + one retry period (1 s) + scheduling slack
    expect(Date.now() - killedAt).toBeLessThan(8_000);
    await requestExport(suite.ns, 'elected', 'after-failover');
    await eventually(
      'new leader handles the trigger',
      async () => (await get('elected')).status?.lastHandledRequestedAt === 'after-failover',
    );
    expect(standby.lines.some((l) => l.includes('"msg":"decided"'))).toBe(true);
  });
});

describe('shutdown and restarts', () => {
  it('on SIGTERM drains, releases the Lease and exits 0', async () => {
    const p = operator(suite.ns);
    const lease = async () =>
      (
        JSON.parse(
          await kubectlOk(['get', 'lease', 'static-export-operator', '-n', suite.ns, '-o', 'json']),
        ) as {
          spec: { holderIdentity?: string };
        }
      ).spec.holderIdentity;
    await eventually('leading', async () => (await lease())?.endsWith(`-${p.pid}`));
    await p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(await lease()).toBe('');
  });

  it('still starts with the retired --bundle-cache-size, warning that it has no effect and what replaces it', async () => {
    const p = operator(undefined, ['--bundle-cache-size', '256MiB']);
    const warning = await p.waitFor(/bundle-cache-size/);
    expect(JSON.parse(warning)).toMatchObject({ level: 40 });
    expect(warning).toContain('--bundle-cache-entries');
    await release('retired-flag');
    await ready('retired-flag');
  });

  it('an AgentJob survives a SIGKILL while active: polled to completion, created once', async () => {
    suite.sim.configure({ agentJobDurationMs: 4_000 });
    const first = operator();
    await applyAgentJob(suite.ns, 'killed-agent', 'proj-kill', 'Rewrite the intro');
    const getJob = () => getAgentJob(suite.ns, 'killed-agent');
    await eventually('job id recorded', async () => (await getJob()).status?.jobId);
    await first.kill('SIGKILL');
    operator();
    const done = await eventually('completed', async () => {
      const j = await getJob();
      return j.status?.state === 'completed' ? j : undefined;
    });
    expect(done.status?.prLink).toMatch(/pull\/\d+$/);
    expect(suite.sim.agentJobsCreated('proj-kill')).toBe(1);
  });
});

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('API server restart', () => {
  it('resumes watching: a release created after the restart becomes Ready', async () => {
    const p = operator();
    await release('before-restart');
    await ready('before-restart');
    const cp = ControlPlane.attach(inject('controlPlaneDir') ?? '');
    await cp.restartComponent('kube-apiserver');
    await release('after-restart');
    await ready('after-restart');
    expect(p.child.exitCode).toBeNull();
  });
});
