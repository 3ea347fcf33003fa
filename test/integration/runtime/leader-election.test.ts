// Leader election on a real coordination.k8s.io/v1 Lease: one leader among candidates, takeover
// after a leader dies without releasing, fast handover on release, and a leader that loses the
// API server stops leading at its renew deadline.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ControlPlane } from '../../../scripts/control-plane/control-plane.ts';
import { KubeClient, type RequestOpts, resourcePath } from '../../../src/runtime/kube-client.ts';
import { LeaderElector, type Lease } from '../../../src/runtime/leader-election.ts';
import { createNamespace, eventually, kubectlOk } from '../../support/cluster/kube.ts';

const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 };

let client: KubeClient;
let ns: string;

interface Candidate {
  elector: LeaderElector;
  stop: AbortController;
  done: Promise<void>;
  /** Lets a test cut this candidate off the API server (a dead or partitioned process). */
  cut: { on: boolean };
  startedAt: number[];
  stoppedAt: number[];
  signal?: AbortSignal;
}

const candidates: Candidate[] = [];

function candidate(identity: string, lease: string): Candidate {
  const cut = { on: false };
  const api = {
    request: <T>(method: string, path: string, opts?: RequestOpts): Promise<T> =>
      cut.on ? Promise.reject(new Error('cut off')) : client.request<T>(method, path, opts),
  };
  const stop = new AbortController();
  const elector = new LeaderElector({ client: api, namespace: ns, name: lease, identity, ...timing });
  const c: Candidate = { elector, stop, cut, startedAt: [], stoppedAt: [], done: Promise.resolve() };
  c.done = elector.run(
    {
      onStartedLeading: (signal) => {
        c.signal = signal;
        c.startedAt.push(Date.now());
      },
      onStoppedLeading: () => c.stoppedAt.push(Date.now()),
    },
    stop.signal,
  );
  candidates.push(c);
  return c;
}

async function readLease(name: string): Promise<Lease> {
  return client.get<Lease>(resourcePath('coordination.k8s.io/v1', 'leases', ns, name));
}

const leaders = (...cs: Candidate[]) => cs.filter((c) => c.elector.isLeader());

beforeAll(async () => {
  client = await KubeClient.create(inject('kubeconfig'));
  ns = await createNamespace('leader');
});
afterEach(async () => {
  for (const c of candidates.splice(0)) {
    c.cut.on = false;
    c.stop.abort();
    await c.done;
  }
});
afterAll(async () => {
  await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  await client.close();
});

describe('LeaderElector on the real API server', () => {
  it('elects exactly one of two candidates; the other takes over within the lease duration after the leader dies', async () => {
    const a = candidate('a', 'takeover');
    const b = candidate('b', 'takeover');
    await eventually('a leader', async () => leaders(a, b).length === 1);
    for (let i = 0; i < 8; i++) {
      expect(leaders(a, b)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 250));
    }
    const [leader] = leaders(a, b);
    const standby = leader === a ? b : a;
    if (!leader) throw new Error('no leader');
    expect((await readLease('takeover')).spec.holderIdentity).toBe(leader.elector.identity);
    expect(standby.elector.currentLeader()).toBe(leader.elector.identity);

    // The leader dies: no more renewals, no release.
    leader.cut.on = true;
    const diedAt = Date.now();
    await eventually('standby leads', async () => standby.elector.isLeader(), 10_000);
    const takeover = (standby.startedAt[0] ?? 0) - diedAt;
    expect(takeover).toBeLessThan(timing.leaseDurationMs + timing.retryPeriodMs * 3);
    // The old leader stopped acting before the new one started: never two leaders at once.
    expect(leader.signal?.aborted).toBe(true);
    expect(leader.stoppedAt[0]).toBeLessThanOrEqual(standby.startedAt[0] ?? 0);
    const lease = await readLease('takeover');
    expect(lease.spec.holderIdentity).toBe(standby.elector.identity);
    expect(lease.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
  });

  it('hands over quickly when the leader releases the lease on shutdown', async () => {
    const a = candidate('a', 'release');
    await eventually('a leads', async () => a.elector.isLeader());
    const b = candidate('b', 'release');
    await new Promise((r) => setTimeout(r, 500));
    expect(b.elector.isLeader()).toBe(false);
    a.stop.abort();
    await a.done;
    const releasedAt = Date.now();
    expect((await readLease('release')).spec.holderIdentity ?? '').toBe('');
    await eventually('b leads', async () => b.elector.isLeader(), 10_000);
    // Well under the lease duration a standby would otherwise wait.
    expect(Date.now() - releasedAt).toBeLessThan(timing.leaseDurationMs / 2);
  });

  it.skipIf(!inject('controlPlaneDir'))(
    'stops leading at the renew deadline when the API server is down, and leads again once it is back',
    async () => {
      const cp = ControlPlane.attach(inject('controlPlaneDir') as string);
      const a = candidate('a', 'outage');
      await eventually('a leads', async () => a.elector.isLeader());
      const signal = a.signal;
      await cp.stopComponent('kube-apiserver');
      const downAt = Date.now();
      try {
        await eventually('leadership lost', async () => signal?.aborted === true, 10_000);
        const lostAfter = Date.now() - downAt;
        expect(lostAfter).toBeLessThanOrEqual(timing.renewDeadlineMs + 500);
        expect(a.elector.isLeader()).toBe(false);
      } finally {
        await cp.startApiServerAgain();
      }
      await eventually('a leads again', async () => a.elector.isLeader(), 30_000);
      expect(a.startedAt).toHaveLength(2);
    },
  );
});
