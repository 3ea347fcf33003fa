// A release of the current export API starts only when its start budget group has its slot, and
// after a 409 only once the busy job is waited out; a contract release starts at once as before.

import { describe, expect, it } from 'vitest';
import type { BudgetView } from '../../../../../src/controllers/static-export-release/budget/start-budget.ts';
import { choose } from '../../../../../src/controllers/static-export-release/decide-release.ts';
import {
  startAsk,
  startOrWait,
  withoutWaitOver,
} from '../../../../../src/controllers/static-export-release/export/join-or-start.ts';
import { afterPublish } from '../../../../../src/controllers/static-export-release/export/publish-content.ts';
import {
  afterStart,
  afterStartBusy,
  afterStartRefused,
} from '../../../../../src/controllers/static-export-release/export/start-export.ts';
import { startReason } from '../../../../../src/controllers/static-export-release/export/start-reason.ts';
import {
  afterServedJobGone,
  pinnedJobGone,
} from '../../../../../src/controllers/static-export-release/link/served-job-gone.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { DEFAULT_TUNABLES } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { REQUESTED_AT_ANNOTATION } from '../../../../../src/crd/index.ts';
import {
  at,
  MIN,
  NOW,
  observed,
  platformCase,
  release,
  servingV1,
  V1,
} from '../../../../support/fixtures/release-fixtures.ts';

const PROJECT = { domain: undefined, projectId: '6520f3a1c9b1a20012ab34cd' };
const current = (opts: Parameters<typeof release>[0] = {}) =>
  release({ ...opts, spec: { ...PROJECT, ...opts.spec } });

function view(slotInMs: number, extra: Partial<BudgetView> = {}): BudgetView {
  return {
    group: 'key-abc',
    limit: 10,
    used: 10,
    slotAt: () => NOW.getTime() + slotInMs,
    announce: false,
    ...extra,
  };
}

describe('startOrWait', () => {
  it('starts a contract release at once: it has no start budget', () => {
    const d = startOrWait(platformCase(release()), 'Initial');
    expect(d.action).toEqual({ kind: 'start', reason: 'Initial' });
  });

  it('starts when the slot is now, and the wait it had goes', () => {
    const waiting: Status = {
      waiting: { reason: 'WaitingForStartBudget', since: at(-MIN), until: at(0), message: 'x' },
    };
    const d = startOrWait(platformCase(current({ status: waiting }), { budget: view(0) }), 'Initial');
    expect(d.action.kind).toBe('start');
    expect(d.status.waiting).toBeUndefined();
  });

  it('waits for a slot to come: WaitingForStartBudget with the group, its use and the slot time, looked at then', () => {
    const d = startOrWait(platformCase(current(), { budget: view(20 * MIN) }), 'Initial');
    expect(d.action.kind).toBe('none');
    expect(d.requeueAfterMs).toBe(20 * MIN);
    expect(d.status.waiting).toMatchObject({
      reason: 'WaitingForStartBudget',
      since: at(0),
      until: at(20 * MIN),
    });
    expect(d.status.waiting?.message).toBe(
      `Waiting for a start slot: start budget group key-abc has used 10 of its 10 export starts in the last hour; this release starts at ${at(20 * MIN)}.`,
    );
  });

  it('keeps the time it began waiting, and says why when a 429 or the intervals are the cause', () => {
    const since = at(-5 * MIN);
    const status: Status = {
      waiting: { reason: 'WaitingForStartBudget', since, until: at(0), message: 'x' },
    };
    const budget = view(10 * MIN, {
      blockedUntil: NOW.getTime() + 10 * MIN,
      overcommit: { sites: 20, wanted: 40, fitsMinutes: 120, fairMinutes: 240 },
    });
    const d = startOrWait(platformCase(current({ status }), { budget }), 'Interval');
    expect(d.status.waiting?.since).toBe(since);
    expect(d.status.waiting?.message).toMatch(/refused a start \(429/);
    expect(d.status.waiting?.message).toMatch(
      /20 sites want 40 starts per hour, more than its 10: an interval of at least 120m/,
    );
  });

  it('after a 409 waits until its time, then starts once more', () => {
    const wait = { reason: 'ExportBusy' as const, since: at(-MIN), until: at(2 * MIN), message: 'x' };
    const busy: Status = { waiting: wait };
    const d = startOrWait(platformCase(current({ status: busy }), { budget: view(0) }), 'Initial');
    expect(d.action.kind).toBe('none');
    expect(d.requeueAfterMs).toBe(2 * MIN);
    // Over: the classification drops it and the start goes.
    const over = withoutWaitOver({ waiting: { ...wait, until: at(-1) } }, NOW);
    expect(over.waiting).toBeUndefined();
    expect(withoutWaitOver(busy, NOW)).toBe(busy);
  });
});

describe('startOrWait while a version is served', () => {
  const slotIn = (ms: number) => ({ budget: view(ms) });

  it("looks again by the served link's renewal when its slot comes later", () => {
    const d = startOrWait(platformCase(current({ status: servingV1() }), slotIn(60 * MIN)), 'Interval');
    expect(d.action.kind).toBe('none');
    expect(d.status.waiting?.reason).toBe('WaitingForStartBudget');
    expect(d.requeueAfterMs).toBe(20 * MIN);
  });

  it('renews the served link when due while it waits for a slot, the wait kept in status', () => {
    const status = servingV1({}, { renewalTime: at(-MIN) });
    const d = startOrWait(platformCase(current({ status }), slotIn(60 * MIN)), 'Interval');
    expect(d.action).toEqual({ kind: 'publish', mode: 'Renew', jobId: 'se_1' });
    expect(d.status.waiting).toMatchObject({ reason: 'WaitingForStartBudget', until: at(60 * MIN) });
  });

  it('renews the served link when due while it waits out a 409', () => {
    const waiting = { reason: 'ExportBusy' as const, since: at(-MIN), until: at(30 * MIN), message: 'x' };
    const status = { ...servingV1({}, { renewalTime: at(-MIN) }), waiting };
    const d = startOrWait(platformCase(current({ status }), slotIn(0)), 'Interval');
    expect(d.action).toEqual({ kind: 'publish', mode: 'Renew', jobId: 'se_1' });
    expect(d.status.waiting).toEqual(waiting);
    const later = { ...servingV1({}, { renewalTime: at(10 * MIN) }), waiting };
    expect(startOrWait(platformCase(current({ status: later }), slotIn(0)), 'Interval').requeueAfterMs).toBe(
      10 * MIN,
    );
  });

  it('waits for its slot alone when the served job is gone (nothing to renew)', () => {
    const status = afterServedJobGone({
      now: NOW,
      release: current({ status: servingV1({}, { renewalTime: at(-MIN) }) }),
    }).status;
    const d = startOrWait(platformCase(current({ status }), slotIn(40 * MIN)), 'JobVanished');
    expect(d.action.kind).toBe('none');
    expect(d.requeueAfterMs).toBe(40 * MIN);
  });
});

describe('startAsk', () => {
  it('puts a request first, and a scheduled start at its due time with its last start', () => {
    const requested = current({ status: servingV1(), annotations: { [REQUESTED_AT_ANNOTATION]: 'now' } });
    expect(startAsk(requested, NOW, DEFAULT_TUNABLES)).toEqual({ dueAt: NOW.getTime(), requested: true });
    // Exported an hour ago with a 30 m interval: due half an hour ago.
    const interval = current({ spec: { interval: '30m' }, status: servingV1() });
    expect(startAsk(interval, NOW, DEFAULT_TUNABLES)).toEqual({
      dueAt: NOW.getTime() - 30 * MIN,
      requested: false,
      lastStart: NOW.getTime() - 60 * MIN,
    });
    // Never exported: as of its creation.
    const created = { ...current(), metadata: { ...current().metadata, creationTimestamp: at(-5 * MIN) } };
    expect(startAsk(created, NOW, DEFAULT_TUNABLES)).toEqual({
      dueAt: NOW.getTime() - 5 * MIN,
      requested: false,
    });
  });
});

describe('the decision with a start budget', () => {
  it('tells an overcommitted group once, with whatever the release decided', () => {
    const budget = view(0, {
      announce: true,
      overcommit: { sites: 3, wanted: 12, fitsMinutes: 18, fairMinutes: 18 },
    });
    const d = choose(observed(current(), { budget })).decision;
    expect(d.action.kind).toBe('start');
    expect(d.events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'StartBudgetOvercommitted' }),
    );
    const quiet = choose(observed(current(), { budget: { ...budget, announce: false } })).decision;
    expect(quiet.events.map((e) => e.reason)).not.toContain('StartBudgetOvercommitted');
  });

  it('a vanished job waits for the budget like any start, and says so', () => {
    const running: Status = {
      export: { jobId: 'j1', projectId: PROJECT.projectId, state: 'running', startedAt: at(-MIN) },
    };
    const d = choose(
      observed(current({ status: running }), { poll: { kind: 'notFound' }, budget: view(5 * MIN) }),
    ).decision;
    expect(d.action.kind).toBe('none');
    expect(d.status.waiting?.reason).toBe('WaitingForStartBudget');
    expect(d.events[0]?.note).toMatch(/a new export starts when its start budget allows/);
  });

  it('a job of the other API revision in flight finishes there, and its record says so', () => {
    const running: Status = { export: { jobId: 'se_1', state: 'running', startedAt: at(-MIN) } };
    const d = choose(
      observed(current({ status: running, generation: 2 }), { poll: { kind: 'job', state: 'running' } }),
    ).decision;
    expect(d.status.export?.message).toMatch(/Started through the contract's export API \(spec\.domain\)/);
    expect(d.status.export?.jobId).toBe('se_1');
  });
});

describe("a sibling's export (the project's other base path)", () => {
  it('is waited for without a start, naming the sibling, and decided afresh once it ended', () => {
    const sibling = { release: 'web/root', jobId: 'j7', startedAt: at(-MIN) };
    const d = startOrWait(platformCase(current(), { budget: view(0), sibling }), 'Initial');
    expect(d.action.kind).toBe('none');
    expect(d.status.waiting).toMatchObject({ reason: 'ExportBusy', sibling: 'web/root' });
    expect(d.status.waiting?.message).toMatch(/export job j7 of release web\/root/);
    // Its wait does not outlast the sibling's job: the next look starts once the job ended.
    expect(withoutWaitOver(d.status, NOW).waiting).toBeUndefined();
    const next = choose(observed(current({ status: d.status }), { budget: view(0) })).decision;
    expect(next.action.kind).toBe('start');
  });
});

describe('the folds of a start of the current API', () => {
  it("records the start among the last hour's starts with its mark (whatever the answer), and the project once started", () => {
    const old = [at(-30 * MIN), at(-61 * MIN)];
    const d = startOrWait(
      platformCase(current({ status: { recentStarts: old } }), { budget: view(0) }),
      'Initial',
    );
    expect(d.status.recentStarts).toEqual([at(0), at(-30 * MIN)]);
    const answered = new Date(NOW.getTime() + 2_000);
    const f = afterStart({ now: answered, release: current({ status: d.status }) }, 'j2', 'queued');
    expect(f.status.export).toMatchObject({ jobId: 'j2', projectId: PROJECT.projectId });
    // Counted once: the start is the one its mark recorded.
    expect(f.status.recentStarts).toEqual([at(0), at(-30 * MIN)]);
    expect(f.events[0]?.note).toBe(`Started export job j2 for project ${PROJECT.projectId}`);
  });

  it('a 409: the mark goes, the release waits, nothing failed', () => {
    const marked: Status = { start: { phase: 'Starting', since: at(0) } };
    const f = afterStartBusy({ now: NOW, release: current({ status: marked }) }, 2 * MIN);
    expect(f.status.start).toBeUndefined();
    expect(f.status.waiting).toMatchObject({ reason: 'ExportBusy', until: at(2 * MIN) });
    expect(f.events[0]).toMatchObject({ type: 'Normal', reason: 'ExportBusy' });
  });

  it('a 429: the mark goes, the release waits for the group, and a Warning names the hourly limit', () => {
    const marked: Status = { start: { phase: 'Starting', since: at(0) } };
    const f = afterStartRefused({ now: NOW, release: current({ status: marked }) }, NOW.getTime() + 60 * MIN);
    expect(f.status.start).toBeUndefined();
    expect(f.status.waiting).toMatchObject({ reason: 'WaitingForStartBudget', until: at(60 * MIN) });
    expect(f.events[0]).toMatchObject({ type: 'Warning', reason: 'RateLimited' });
    expect(f.events[0]?.note).toMatch(/more than 10 starts per organization in the last hour/);
  });

  it('a purged served job: forgotten, and an unpinned release exports anew; a pinned one is told it must choose', () => {
    const status = servingV1({}, { projectId: PROJECT.projectId });
    const f = afterServedJobGone({ now: NOW, release: current({ status }) });
    expect(f.status.current?.jobId).toBeUndefined();
    expect(f.status.current?.version).toBe(V1);
    expect(startReason(current({ status: f.status }), NOW, DEFAULT_TUNABLES)).toBe('JobVanished');
    expect(
      startReason(current({ status: f.status, spec: { pinnedVersion: V1 } }), NOW, DEFAULT_TUNABLES),
    ).toBeUndefined();
    // The new export has the same content: served again with the new job's link, its job recorded
    // (else the release would export again and again).
    const again = afterPublish(
      { now: NOW, release: current({ status: f.status }) },
      {
        mode: 'NewContent',
        jobId: 'j9',
        projectId: PROJECT.projectId,
        version: V1,
        expiresAt: new Date(NOW.getTime() + 60 * MIN),
        wrote: true,
      },
    );
    expect(again.status.current).toMatchObject({ version: V1, jobId: 'j9', projectId: PROJECT.projectId });
    expect(startReason(current({ status: again.status }), NOW, DEFAULT_TUNABLES)).toBeUndefined();
    const gone = pinnedJobGone(status, V1, 'se_1');
    expect(gone).toMatchObject({ reason: 'PinnedJobGone', stalled: true });
    expect(gone.message).toMatch(
      /pods keep serving what they have, but a pod started after the link expires at/,
    );
  });
});
