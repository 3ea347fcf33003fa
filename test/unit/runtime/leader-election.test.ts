// Leader election against an in-memory Lease endpoint with the API server's optimistic
// concurrency (PUT with a stale resourceVersion is a 409, POST of an existing name is a 409).
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError, type RequestOpts } from '../../../src/runtime/kube-client.ts';
import { LeaderElector, type Lease, microTime } from '../../../src/runtime/leader-election.ts';
import { until } from './fake-kube.ts';

class FakeLeaseApi {
  lease: Lease | undefined;
  rv = 1;
  down = false;
  writes = 0;

  async request<T>(method: string, _path: string, opts: RequestOpts = {}): Promise<T> {
    if (this.down) throw new Error('connect ECONNREFUSED');
    const body = opts.body as Lease | undefined;
    switch (method) {
      case 'GET':
        if (!this.lease) throw new KubeApiError(404, 'NotFound', 'not found');
        return structuredClone(this.lease) as T;
      case 'POST':
        if (this.lease) throw new KubeApiError(409, 'AlreadyExists', 'exists');
        break;
      case 'PUT':
        if (body?.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
          throw new KubeApiError(409, 'Conflict', 'the object has been modified');
        }
        break;
    }
    this.writes++;
    this.lease = structuredClone({
      ...(body as Lease),
      metadata: { ...body?.metadata, resourceVersion: String(++this.rv) },
    }) as Lease;
    return structuredClone(this.lease) as T;
  }
}

const timing = { leaseDurationMs: 400, renewDeadlineMs: 250, retryPeriodMs: 50 };

interface Candidate {
  elector: LeaderElector;
  stop: AbortController;
  done: Promise<void>;
  log: string[];
  signal?: AbortSignal;
}

function candidate(api: FakeLeaseApi, identity: string): Candidate {
  const stop = new AbortController();
  const elector = new LeaderElector({ client: api, namespace: 'ns', name: 'lock', identity, ...timing });
  const c: Candidate = { elector, stop, log: [], done: Promise.resolve() };
  c.done = elector.run(
    {
      onStartedLeading: (signal) => {
        c.signal = signal;
        c.log.push('started');
      },
      onStoppedLeading: () => c.log.push('stopped'),
    },
    stop.signal,
  );
  return c;
}

const all: Candidate[] = [];
afterEach(async () => {
  for (const c of all.splice(0)) {
    c.stop.abort();
    await c.done;
  }
});

describe('microTime', () => {
  it('formats with six fractional digits', () => {
    expect(microTime(new Date('2024-05-06T07:08:09.123Z'))).toBe('2024-05-06T07:08:09.123000Z');
  });
});

describe('LeaderElector', () => {
  it('creates the lease, renews it, and a second candidate stays standby', async () => {
    const api = new FakeLeaseApi();
    const a = candidate(api, 'a');
    all.push(a);
    await until('a leads', () => a.elector.isLeader());
    const b = candidate(api, 'b');
    all.push(b);
    const firstRenew = api.lease?.spec.renewTime;
    await new Promise((r) => setTimeout(r, 600)); // longer than the lease duration
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.currentLeader()).toBe('a');
    expect(b.elector.healthy()).toBe(true);
    expect(api.lease?.spec.renewTime).not.toBe(firstRenew);
    expect(api.lease?.spec).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: 1,
      leaseTransitions: 0,
    });
  });

  it('a standby takes over after the lease expires when the leader stops renewing', async () => {
    const api = new FakeLeaseApi();
    api.lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lock', namespace: 'ns', resourceVersion: '1' },
      spec: {
        holderIdentity: 'dead',
        leaseDurationSeconds: 1,
        renewTime: microTime(new Date()),
        leaseTransitions: 3,
      },
    };
    const b = candidate(api, 'b');
    all.push(b);
    const started = Date.now();
    await until('b leads', () => b.elector.isLeader(), 3_000);
    // Expiry counts from when b first saw the record (1 s lease), not from the holder's clock.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(api.lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 4 });
  });

  it('stops leading at the renew deadline when the API is unreachable, and leads again later', async () => {
    const api = new FakeLeaseApi();
    const a = candidate(api, 'a');
    all.push(a);
    await until('a leads', () => a.elector.isLeader());
    const signal = a.signal;
    api.down = true;
    const downAt = Date.now();
    await until('signal aborted', () => signal?.aborted === true);
    const lostAfter = Date.now() - downAt;
    expect(lostAfter).toBeGreaterThanOrEqual(timing.renewDeadlineMs - timing.retryPeriodMs - 10);
    expect(lostAfter).toBeLessThan(timing.leaseDurationMs);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    api.down = false;
    await until('a leads again', () => a.elector.isLeader());
    expect(a.log).toEqual(['started', 'stopped', 'started']);
  });

  it('release on stop empties the holder so a standby takes over at once', async () => {
    const api = new FakeLeaseApi();
    const a = candidate(api, 'a');
    await until('a leads', () => a.elector.isLeader());
    const b = candidate(api, 'b');
    all.push(b);
    await new Promise((r) => setTimeout(r, 100));
    a.stop.abort();
    await a.done;
    expect(a.log).toEqual(['started', 'stopped']);
    expect(a.signal?.aborted).toBe(true);
    const releasedAt = Date.now();
    await until('b leads', () => b.elector.isLeader());
    expect(Date.now() - releasedAt).toBeLessThan(timing.leaseDurationMs);
  });

  it('only one of several racing candidates wins', async () => {
    const api = new FakeLeaseApi();
    const cs = ['a', 'b', 'c', 'd'].map((id) => candidate(api, id));
    all.push(...cs);
    await until('a leader', () => cs.some((c) => c.elector.isLeader()));
    for (let i = 0; i < 10; i++) {
      expect(cs.filter((c) => c.elector.isLeader())).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 30));
    }
  });

  it('rejects a renew deadline not below the lease duration', () => {
    expect(
      () =>
        new LeaderElector({
          client: new FakeLeaseApi(),
          namespace: 'n',
          name: 'l',
          leaseDurationMs: 1,
          renewDeadlineMs: 1,
        }),
    ).toThrow(/renewDeadline/);
  });
});
