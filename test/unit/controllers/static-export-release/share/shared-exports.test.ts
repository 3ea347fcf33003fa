// One export per site at a time: the pure join decision, the in-memory share groups (who starts,
// who joins, one poll and one link for all) and the share key.
import { describe, expect, it } from 'vitest';
import type { ExportStatus, GeneratedBundle } from '../../../../../src/api/index.ts';
import { NotFoundError } from '../../../../../src/api/index.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { JOIN_WAIT_MS } from '../../../../../src/controllers/static-export-release/schedule.ts';
import {
  SharedExports,
  shareKey,
} from '../../../../../src/controllers/static-export-release/share/shared-exports.ts';
import { REQUESTED_AT_ANNOTATION } from '../../../../../src/crd/index.ts';
import { decided as decide } from '../../../../support/fixtures/committed.ts';
import {
  at,
  observed,
  release as platformRelease,
  type ReleaseOptions,
  V1,
} from '../../../../support/fixtures/release-fixtures.ts';

/** staging/docs, no uid. */
const release = (opts: Pick<ReleaseOptions, 'status' | 'annotations' | 'spec'> = {}) =>
  platformRelease({ ...opts, namespace: 'staging', uid: null });
const obs = observed;

/** Served V1 from job-old, exported a day ago. */
const served: Status = {
  observedGeneration: 1,
  export: { jobId: 'job-old', state: 'completed', startedAt: at(-86_400_000), finishedAt: at(-86_300_000) },
  current: { version: V1, jobId: 'job-old', expiresAt: at(3_600_000), renewalTime: at(3_000_000) },
};

describe('decide: joining the share group export', () => {
  it('a new release joins the job in flight: same job id in its status, nothing is started', () => {
    const d = decide(obs(release(), { shared: { jobId: 'job-a', startedAt: at(-5_000), state: 'running' } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export).toEqual({
      jobId: 'job-a',
      revision: 'contract',
      state: 'running',
      startedAt: at(-5_000),
      joined: true,
      generation: 1,
    });
    expect(d.status.start).toBeUndefined();
    expect(d.status.observedGeneration).toBe(1);
    expect(d.events.map((e) => e.reason)).toEqual(['ExportJoined']);
    expect(d.requeueAfterMs).toBeGreaterThan(0);
    expect(d.status.conditions?.find((c) => c.type === 'Exporting')?.status).toBe('True');
  });

  it('another release starting it (no job id yet): waits and looks again, never starts a second', () => {
    const d = decide(obs(release(), { shared: { startedAt: at(0) } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.requeueAfterMs).toBe(JOIN_WAIT_MS);
    expect(d.status).toEqual({});
  });

  it('a trigger on another release of the group re-exports this one too: a newer job is joined without a reason of its own', () => {
    const d = decide(
      obs(release({ status: served }), { shared: { jobId: 'job-new', startedAt: at(-1_000) } }),
    );
    expect(d.status.export?.jobId).toBe('job-new');
    expect(d.status.export?.joined).toBe(true);
    // What is served stays until the joined export publishes.
    expect(d.status.current).toEqual(served.current);
  });

  it('its own trigger, while the group exports: joins that export and counts the trigger as handled', () => {
    const r = release({ status: served, annotations: { [REQUESTED_AT_ANNOTATION]: 't1' } });
    const d = decide(obs(r, { shared: { jobId: 'job-new', startedAt: at(-1_000) } }));
    expect(d.status.export?.jobId).toBe('job-new');
    expect(d.status.lastHandledRequestedAt).toBe('t1');
  });

  it('its own trigger, nobody exporting: starts (and the group joins it)', () => {
    const r = release({ status: served, annotations: { [REQUESTED_AT_ANNOTATION]: 't1' } });
    expect(decide(obs(r)).action).toEqual({ kind: 'start', reason: 'Requested' });
  });

  it('while the operator still loads the releases (another may record a job in flight): waits, never starts', () => {
    const d = decide(obs(release(), { peersUnknown: true }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.requeueAfterMs).toBe(JOIN_WAIT_MS);
    expect(d.status).toEqual({});
  });

  it('while the releases still load, a job the group knows is joined all the same', () => {
    const d = decide(
      obs(release(), { peersUnknown: true, shared: { jobId: 'job-a', startedAt: at(-1_000) } }),
    );
    expect(d.status.export?.jobId).toBe('job-a');
    expect(d.events.map((e) => e.reason)).toEqual(['ExportJoined']);
  });

  it('a group export older than its own last one and no reason of its own: not joined', () => {
    const status: Status = {
      ...served,
      export: { ...served.export, startedAt: at(-1_000), finishedAt: at(-500) },
    };
    const d = decide(obs(release({ status }), { shared: { jobId: 'job-x', startedAt: at(-2_000) } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export?.jobId).toBe('job-old');
  });

  it('its own job in flight is polled as before, whatever the group says', () => {
    const status: Status = { export: { jobId: 'job-a', state: 'running', startedAt: at(-3_000) } };
    const d = decide(
      obs(release({ status }), {
        shared: { jobId: 'job-a', startedAt: at(-3_000) },
        poll: { kind: 'job', state: 'completed', pageCount: 3 },
      }),
    );
    expect(d.action).toEqual({ kind: 'publish', mode: 'NewContent', jobId: 'job-a' });
  });

  it('a pinned release never joins (it does not export)', () => {
    const r = release({ status: { ...served, history: [] }, spec: { pinnedVersion: V1 } });
    const d = decide(obs(r, { shared: { jobId: 'job-new', startedAt: at(-1_000) } }));
    expect(d.status.export?.jobId).toBe('job-old');
  });

  it('a start whose outcome is unknown is still waited out first', () => {
    const status: Status = { start: { phase: 'Starting', since: at(-1_000) } };
    const d = decide(obs(release({ status }), { shared: { jobId: 'job-a', startedAt: at(-500) } }));
    expect(d.failure?.reason).toBe('StartOutcomeUnknown');
  });
});

describe('shareKey', () => {
  const spec = release().spec;
  it('is the same for the same account, domain and options, whatever else differs', () => {
    const other = release({ spec: { interval: '1h', publishGate: { minPages: 5 } } }).spec;
    expect(shareKey('acct', spec)).toBe(shareKey('acct', other));
  });
  it('differs for another account, domain, version label or page list', () => {
    const keys = [
      shareKey('acct', spec),
      shareKey('other-acct', spec),
      shareKey('acct', release({ spec: { domain: 'blog.example.com' } }).spec),
      shareKey('acct', release({ spec: { export: { versionLabel: 'v2' } } }).spec),
      shareKey('acct', release({ spec: { export: { paths: ['/a'] } } }).spec),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

const job = (status: string): ExportStatus => ({ jobId: 'j1', status });

function group(opts: { now?: () => number } = {}) {
  const woken: string[] = [];
  const shared = new SharedExports({ wake: (r) => woken.push(r), ...opts });
  shared.enter('staging/docs', 'G');
  shared.enter('prod/docs', 'G');
  return { shared, woken };
}

describe('SharedExports', () => {
  it('a claim makes the group wait; its job id wakes the others, who then see it', () => {
    const { shared, woken } = group();
    shared.claim('G', 'staging/docs', at(0));
    expect(shared.flight('G')).toEqual({ startedAt: at(0) });
    // A second claim while one is under way changes nothing.
    shared.claim('G', 'prod/docs', at(1));
    shared.started('G', 'staging/docs', 'acct', 'j1', at(0));
    expect(shared.flight('G')).toEqual({ jobId: 'j1', startedAt: at(0), state: 'queued' });
    expect(woken).toEqual(['prod/docs']);
  });

  it('a claim that returned no job is dropped and the others are woken to start themselves', () => {
    const { shared, woken } = group();
    shared.claim('G', 'staging/docs', at(0));
    shared.abandon('prod/docs'); // not its claim
    expect(shared.flight('G')).toBeDefined();
    shared.abandon('staging/docs');
    expect(shared.flight('G')).toBeUndefined();
    expect(woken).toEqual(['prod/docs']);
  });

  it('a claim given up only to wait for a request slot wakes nobody (no claim-wake round trip)', () => {
    const { shared, woken } = group();
    shared.claim('G', 'staging/docs', at(0));
    shared.abandon('staging/docs', false);
    expect(shared.flight('G')).toBeUndefined();
    expect(woken).toEqual([]);
  });

  it("a project's other base path sees the flight as its sibling's, and is woken when it lands", async () => {
    const woken: string[] = [];
    const shared = new SharedExports({ wake: (r) => woken.push(r) });
    shared.enter('web/root', 'ROOT', 'acct\u0000p1');
    shared.enter('web/docs', 'DOCS', 'acct\u0000p1');
    shared.enter('web/other', 'OTHER', 'acct\u0000p2');
    expect(shared.sibling('DOCS')).toBeUndefined();
    shared.claim('ROOT', 'web/root', at(0));
    expect(shared.sibling('DOCS')).toEqual({ release: 'web/root', flight: { startedAt: at(0) } });
    // Its own flight is no sibling; another project's groups see none.
    expect(shared.sibling('ROOT')).toBeUndefined();
    expect(shared.sibling('OTHER')).toBeUndefined();
    shared.started('ROOT', 'web/root', 'acct', 'j1', at(0));
    expect(shared.sibling('DOCS')?.flight.jobId).toBe('j1');
    woken.length = 0;
    await shared.poll('acct', 'j1', async () => job('completed'));
    expect(shared.sibling('DOCS')).toBeUndefined();
    expect(woken).toEqual(['web/root', 'web/docs']);
  });

  it('releases in other groups never see the flight', () => {
    const { shared } = group();
    shared.enter('other/docs', 'H');
    shared.claim('G', 'staging/docs', at(0));
    expect(shared.flight('H')).toBeUndefined();
  });

  it('one poll call answers every member until the poller polls next; the end of the job lands the flight', async () => {
    let t = 0;
    const { shared, woken } = group({ now: () => t });
    shared.started('G', 'staging/docs', 'acct', 'j1', at(0));
    let calls = 0;
    const call = async () => {
      calls++;
      return job(calls < 3 ? 'running' : 'completed');
    };
    // Two members at once: one call.
    const [a, b] = await Promise.all([shared.poll('acct', 'j1', call), shared.poll('acct', 'j1', call)]);
    expect(calls).toBe(1);
    expect([a.polled, b.polled].sort()).toEqual([false, true]);
    shared.pollFreshUntil('acct', 'j1', 5_000);
    t = 4_000;
    expect((await shared.poll('acct', 'j1', call)).polled).toBe(false);
    expect(shared.flight('G')?.state).toBe('running');
    t = 5_000;
    await shared.poll('acct', 'j1', call);
    expect(calls).toBe(2);
    t = 10_000;
    const done = await shared.poll('acct', 'j1', call);
    expect(done.kind === 'job' && done.job.status).toBe('completed');
    // The group may start anew; every member is woken to publish.
    expect(shared.flight('G')).toBeUndefined();
    expect(woken).toEqual(expect.arrayContaining(['staging/docs', 'prod/docs']));
    // The final answer is kept for the members still to look, and never adopted as a flight again.
    t = 60_000;
    expect((await shared.poll('acct', 'j1', call)).polled).toBe(false);
    shared.adopt('G', 'acct', 'j1', at(0));
    expect(shared.flight('G')).toBeUndefined();
  });

  it('a gone job is an answer (notFound) and ends the flight', async () => {
    const { shared } = group();
    shared.started('G', 'staging/docs', 'acct', 'j1', at(0));
    const r = await shared.poll('acct', 'j1', async () => {
      throw new NotFoundError('gone', { operation: 'getExport', status: 404 });
    });
    expect(r.kind).toBe('notFound');
    expect(shared.flight('G')).toBeUndefined();
  });

  it("another account's job of the same id is never answered from here (no poll, no link shared)", async () => {
    const { shared } = group();
    let polls = 0;
    const call = async () => {
      polls++;
      return job('running');
    };
    await shared.poll('acct', 'j1', call);
    await shared.poll('other', 'j1', call);
    expect(polls).toBe(2);
    const link = (url: string) => async (): Promise<GeneratedBundle> => ({
      jobId: 'j1',
      bundleUrl: url,
      expiresAt: new Date(Date.now() + 900_000),
    });
    expect((await shared.link('acct', 'j1', link('https://a/1'))).bundleUrl).toBe('https://a/1');
    expect((await shared.link('other', 'j1', link('https://b/1'))).bundleUrl).toBe('https://b/1');
  });

  it('a link is shared while most of its lifetime is ahead, then generated anew', async () => {
    let t = 0;
    const { shared } = group({ now: () => t });
    let n = 0;
    const call = async (): Promise<GeneratedBundle> => ({
      jobId: 'j1',
      bundleUrl: `https://b/${++n}`,
      expiresAt: new Date(t + 1_000_000),
    });
    const [a, b] = await Promise.all([shared.link('acct', 'j1', call), shared.link('acct', 'j1', call)]);
    expect(a.bundleUrl).toBe(b.bundleUrl);
    t = 100_000; // 10 % of its lifetime
    expect((await shared.link('acct', 'j1', call)).bundleUrl).toBe('https://b/1');
    t = 100_001;
    expect((await shared.link('acct', 'j1', call)).bundleUrl).toBe('https://b/2');
  });

  it('keeps no link past its share of reuse, even before it expires', async () => {
    let t = 0;
    const shared = new SharedExports({ now: () => t });
    const call = async (): Promise<GeneratedBundle> => ({
      jobId: 'j',
      bundleUrl: 'https://b/1',
      expiresAt: new Date(t + 1_000_000),
    });
    // Links are swept every 256 answers kept: 255 now, the 256th after their reuse share ended.
    for (let i = 0; i < 255; i++) await shared.link('acct', `j${i}`, call);
    expect(shared.kept().links).toBe(255);
    t = 100_001;
    await shared.link('acct', 'j255', call);
    expect(shared.kept().links).toBe(1);
  });

  it('after a restart a member re-finds the flight from its status; the others join it', () => {
    const shared = new SharedExports();
    shared.enter('prod/docs', 'G');
    shared.adopt('G', 'acct', 'j1', at(-10_000));
    shared.enter('staging/docs', 'G');
    // A second member adopting its own (same) job changes nothing.
    shared.adopt('G', 'acct', 'j1', at(-10_000));
    expect(shared.flight('G')).toEqual({ jobId: 'j1', startedAt: at(-10_000) });
  });

  it('a group all of whose members left is forgotten', () => {
    const { shared } = group();
    shared.started('G', 'staging/docs', 'acct', 'j1', at(0));
    shared.leave('staging/docs');
    expect(shared.flight('G')).toBeDefined();
    shared.leave('prod/docs');
    expect(shared.flight('G')).toBeUndefined();
  });

  it('a member moving to another group (its options changed) leaves the first', () => {
    const { shared, woken } = group();
    shared.enter('staging/docs', 'H');
    shared.started('G', 'prod/docs', 'acct', 'j1', at(0));
    expect(woken).toEqual([]);
  });
});

describe('decide: a shared job that vanished', () => {
  const status: Status = {
    export: { jobId: 'job-a', state: 'running', startedAt: at(-3_000), joined: true },
  };

  it('the first member to see it starts the next export', () => {
    const d = decide(obs(release({ status }), { poll: { kind: 'notFound' } }));
    expect(d.action).toEqual({ kind: 'start', reason: 'JobVanished' });
  });

  it('a member seeing it after another started the next one joins that instead of starting a second', () => {
    const d = decide(
      obs(release({ status }), {
        poll: { kind: 'notFound' },
        shared: { jobId: 'job-b', startedAt: at(-100) },
      }),
    );
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export?.state).toBe('vanished');
    const next = decide(
      obs(release({ status: d.status }), { shared: { jobId: 'job-b', startedAt: at(-100) } }),
    );
    expect(next.status.export?.jobId).toBe('job-b');
  });
});
