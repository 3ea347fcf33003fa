import { describe, expect, it } from 'vitest';
import { type Failure, nextStep, RetryableError } from '../../../../src/controllers/failures.ts';
import * as exportFolds from '../../../../src/controllers/static-export-release/export/publish-content.ts';
import { judgeNewContent } from '../../../../src/controllers/static-export-release/export/publish-gate.ts';
import * as startFolds from '../../../../src/controllers/static-export-release/export/start-export.ts';
import {
  DEFAULT_TUNABLES,
  type Status,
} from '../../../../src/controllers/static-export-release/release-model.ts';
import {
  exportPollDelayMs,
  renewalTime,
} from '../../../../src/controllers/static-export-release/schedule.ts';
import { REQUESTED_AT_ANNOTATION } from '../../../../src/crd/index.ts';
import { decided as decide, folded } from '../../../support/fixtures/committed.ts';
import {
  at,
  MIN,
  NOW,
  observed,
  release,
  servingV1,
  V1,
  V2,
} from '../../../support/fixtures/release-fixtures.ts';

const afterPublish = folded(exportFolds.afterPublish);
const afterPublishGateFailed = folded(exportFolds.afterPublishGateFailed);
const afterStart = folded(startFolds.afterStart);
const { afterStartFailed } = startFolds;

/** A release that serves V1, link renewed in 20 minutes, last export finished an hour ago. */
const serving = (overrides: Partial<Status> = {}): Status => ({
  ...servingV1({ progress: 100 }),
  ...overrides,
});

const inFlight = (state: string, startedAgoMs = 2_000, base: Status = {}): Status => ({
  ...base,
  observedGeneration: 1,
  export: { jobId: 'se_2', state, progress: 0, startedAt: at(-startedAgoMs) },
});

const condition = (s: Status, type: string) => s.conditions?.find((c) => c.type === type);

describe('starting exports', () => {
  it('starts the first export of a new release', () => {
    expect(decide(observed(release())).action).toEqual({ kind: 'start', reason: 'Initial' });
  });

  it('starts again when the spec changed (new generation)', () => {
    const d = decide(observed(release({ generation: 2, status: serving() })));
    expect(d.action).toEqual({ kind: 'start', reason: 'SpecChanged' });
  });

  it('starts when the requested-at annotation has a new value, and not for one already handled', () => {
    const fresh = release({
      annotations: { [REQUESTED_AT_ANNOTATION]: 'now-2' },
      status: serving({ lastHandledRequestedAt: 'now-1' }),
    });
    expect(decide(observed(fresh)).action).toEqual({ kind: 'start', reason: 'Requested' });
    const handled = release({
      annotations: { [REQUESTED_AT_ANNOTATION]: 'now-1' },
      status: serving({ lastHandledRequestedAt: 'now-1' }),
    });
    expect(decide(observed(handled)).action).toEqual({ kind: 'none' });
  });

  it('starts when the interval has passed since the last export started, not before', () => {
    expect(decide(observed(release({ spec: { interval: '1h' }, status: serving() }))).action).toEqual({
      kind: 'start',
      reason: 'Interval',
    });
    const d = decide(observed(release({ spec: { interval: '2h' }, status: serving() })));
    expect(d.action).toEqual({ kind: 'none' });
    // renewal (20 min) comes before the next interval (60 min)
    expect(d.requeueAfterMs).toBe(20 * MIN);
  });

  it('without an interval, never re-exports on its own', () => {
    const d = decide(observed(release({ status: serving() })));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.requeueAfterMs).toBe(20 * MIN);
  });
});

describe('a start whose answer was never recorded', () => {
  const starting = (since = at(0)) => ({ phase: 'Starting' as const, since });

  it('marks Starting in status before the start call, and the answer clears the mark', () => {
    const d = decide(observed(release()));
    expect(d.status.start).toEqual(starting());
    const { status } = afterStart(observed(release({ status: d.status })), 'se_9', 'queued');
    expect(status.start).toBeUndefined();
    expect(status.export?.jobId).toBe('se_9');
  });

  it('reports StartOutcomeUnknown and does not start again before the wait is over, whatever else is wrong', () => {
    const r = release({ generation: 2, status: serving({ start: starting(at(-MIN)) }) });
    const d = decide(observed(r));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.start).toEqual({ phase: 'OutcomeUnknown', since: at(-MIN) });
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'StartOutcomeUnknown' });
    expect(condition(d.status, 'Ready')?.message).toContain(`before ${at(9 * MIN)}`);
    expect(condition(d.status, 'Stalled')).toBeUndefined();
    expect(d.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'StartOutcomeUnknown' })]);
    expect(nextStep(d)).toEqual({ requeueAfterMs: 9 * MIN });

    // Said once; a missing key Secret meanwhile does not hide it either.
    const blocked: Failure = {
      reason: 'SecretNotFound',
      message: 'gone',
      stalled: true,
      retryAfterMs: 30_000,
    };
    const again = decide(observed(release({ generation: 2, status: d.status }), { blocked }));
    expect(again.action).toEqual({ kind: 'none' });
    expect(again.events).toEqual([]);
    expect(condition(again.status, 'Ready')?.reason).toBe('StartOutcomeUnknown');
  });

  it('starts again once the wait is over, with a fresh mark', () => {
    const r = release({
      generation: 2,
      status: serving({
        start: { phase: 'OutcomeUnknown', since: at(-DEFAULT_TUNABLES.startOutcomeWaitMs) },
      }),
    });
    const d = decide(observed(r));
    expect(d.action).toEqual({ kind: 'start', reason: 'SpecChanged' });
    expect(d.status.start).toEqual(starting());
  });

  it('after the wait, a release that no longer needs the start drops the mark', () => {
    const r = release({
      status: serving({
        start: { phase: 'OutcomeUnknown', since: at(-DEFAULT_TUNABLES.startOutcomeWaitMs) },
      }),
    });
    const d = decide(observed(r));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.start).toBeUndefined();
    expect(condition(d.status, 'Ready')?.reason).toBe('Published');
  });

  it('a start refused by the platform drops the mark; one that may have arrived keeps it', () => {
    const marked = decide(observed(release())).status;
    expect(afterStartFailed(marked, false).start).toBeUndefined();
    expect(afterStartFailed(marked, true).start).toEqual(starting());
  });
});

describe('an export in flight', () => {
  it('records progress and page count and polls soon while young', () => {
    const r = release({ status: inFlight('queued') });
    const d = decide(observed(r, { poll: { kind: 'job', state: 'running', progress: 40, pageCount: 12 } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export).toMatchObject({ jobId: 'se_2', state: 'running', progress: 40, pageCount: 12 });
    expect(condition(d.status, 'Exporting')).toMatchObject({
      status: 'True',
      message: 'Export job se_2 is running, 40%, 12 pages',
    });
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'Exporting' });
    expect(d.status.export?.progressSamples).toEqual([{ at: NOW.toISOString(), progress: 40 }]);
    // One progress value, measured from the start (2 s ago): 40 % says 3 s more.
    expect(d.requeueAfterMs).toBe(3_000);
  });

  it('polls next when the progress seen so far says the export ends', () => {
    // 10 % at 20 s, 40 % at 80 s: 0.5 %/s, so 100 % is due 120 s after now.
    const status = inFlight('running', 80_000);
    status.export = { ...status.export, progressSamples: [{ at: at(-60_000), progress: 10 }] };
    const d = decide(
      observed(release({ status }), { poll: { kind: 'job', state: 'running', progress: 40 } }),
    );
    expect(d.status.export?.progressSamples?.map((p) => p.progress)).toEqual([10, 40]);
    // Far from the end: the ceiling (60 s).
    expect(d.requeueAfterMs).toBe(60_000);
    // 30 s before that end: at the end.
    expect(exportPollDelayMs(d.status, new Date(NOW.getTime() + 90_000))).toBe(30_000);
  });

  it("first looks at a restarted release's export when this site's exports usually end", () => {
    const status = inFlight('queued', 0, { exportDurationsSeconds: [40, 45, 600] });
    // The median (45 s), not the outlier.
    expect(exportPollDelayMs(status, NOW)).toBe(45_000);
    // Nothing known: a second (small sites are done by then).
    expect(exportPollDelayMs(inFlight('queued', 0), NOW)).toBe(1_000);
  });

  it('records how long a completed export took: by the platform timestamps, else from the start', () => {
    const base = inFlight('running', 50_000, { exportDurationsSeconds: [30] });
    const timed = decide(
      observed(release({ status: base }), {
        poll: {
          kind: 'job',
          state: 'completed',
          createdAt: '2026-11-22T11:59:10Z',
          updatedAt: '2026-11-22T11:59:52.500Z',
        },
      }),
    );
    expect(timed.status.exportDurationsSeconds).toEqual([42.5, 30]);
    const untimed = decide(
      observed(release({ status: base }), { poll: { kind: 'job', state: 'completed' } }),
    );
    expect(untimed.status.exportDurationsSeconds).toEqual([50, 30]);
  });

  it('keeps only the last five durations', () => {
    const status = inFlight('running', 10_000, { exportDurationsSeconds: [1, 2, 3, 4, 5] });
    const d = decide(observed(release({ status }), { poll: { kind: 'job', state: 'completed' } }));
    expect(d.status.exportDurationsSeconds).toEqual([10, 1, 2, 3, 4]);
  });

  it('does not poll an export in a final state', () => {
    expect(exportPollDelayMs(inFlight('completed'), NOW)).toBeUndefined();
    expect(exportPollDelayMs(inFlight('failed'), NOW)).toBeUndefined();
    const failed = decide(
      observed(release({ status: inFlight('running') }), {
        poll: { kind: 'job', state: 'failed', error: 'x' },
      }),
    );
    // Nothing served and no interval: the retry after 5 min is the next reconcile, not a poll.
    expect(failed.requeueAfterMs).toBe(DEFAULT_TUNABLES.exportRetryMs);
    expect(failed.status.exportDurationsSeconds).toBeUndefined();
  });

  it('keeps polling a state it does not know, and records it', () => {
    const d = decide(
      observed(release({ status: inFlight('running') }), { poll: { kind: 'job', state: 'paused' } }),
    );
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export?.state).toBe('paused');
    expect(d.requeueAfterMs).toBeGreaterThan(0);
  });

  it('publishes when the job completed', () => {
    const d = decide(
      observed(release({ status: inFlight('running') }), {
        poll: { kind: 'job', state: 'completed', pageCount: 30 },
      }),
    );
    expect(d.action).toEqual({ kind: 'publish', mode: 'NewContent', jobId: 'se_2' });
    expect(d.status.export).toMatchObject({ state: 'completed', progress: 100, pageCount: 30 });
    expect(d.events).toEqual([expect.objectContaining({ reason: 'ExportCompleted' })]);
  });

  it('retries publishing a completed job without polling it again', () => {
    const d = decide(observed(release({ status: inFlight('completed') })));
    expect(d.action).toEqual({ kind: 'publish', mode: 'NewContent', jobId: 'se_2' });
  });

  it('finishes an in-flight export before acting on a new generation or a pin', () => {
    const r = release({
      generation: 3,
      spec: { pinnedVersion: V1 },
      status: inFlight('running', 2_000, serving()),
    });
    const d = decide(observed(r, { poll: { kind: 'job', state: 'running', progress: 10 } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export?.jobId).toBe('se_2');
  });

  it('starts a new export when the job vanished (404)', () => {
    const d = decide(observed(release({ status: inFlight('running') }), { poll: { kind: 'notFound' } }));
    expect(d.action).toEqual({ kind: 'start', reason: 'JobVanished' });
    expect(d.status.export).toMatchObject({ state: 'vanished', finishedAt: NOW.toISOString() });
    expect(d.events[0]).toMatchObject({ type: 'Warning', reason: 'ExportVanished' });
  });

  it('reports a failed export and retries later when nothing is served yet', () => {
    const r = release({ status: inFlight('running') });
    const d = decide(observed(r, { poll: { kind: 'job', state: 'failed', error: 'renderer crashed' } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(condition(d.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ExportFailed',
      message: expect.stringMatching(
        /^Export job se_2 failed: renderer crashed; tried again at 2026-11-22T12:05:00.000Z \(1 in a row/,
      ),
    });
    expect(condition(d.status, 'Stalled')).toBeUndefined();
    expect(d.requeueAfterMs).toBe(DEFAULT_TUNABLES.exportRetryMs);
    const later = decide({
      source: 'platform',
      now: new Date(NOW.getTime() + DEFAULT_TUNABLES.exportRetryMs),
      release: { ...r, status: d.status },
    });
    expect(later.action).toEqual({ kind: 'start', reason: 'Retry' });
  });

  it('after a failed re-export keeps serving and waits for the next interval', () => {
    const r = release({ spec: { interval: '6h' }, status: inFlight('running', 2_000, serving()) });
    const d = decide(observed(r, { poll: { kind: 'job', state: 'failed' } }));
    expect(d.status.current?.version).toBe(V1);
    expect(d.requeueAfterMs).toBe(6 * 60 * MIN - 2_000);
  });

  it('turns a poll error into a condition with its retry delay', () => {
    const failure: Failure = {
      reason: 'AuthenticationFailed',
      message: 'rejected',
      stalled: true,
      retryAfterMs: 5 * MIN,
    };
    const d = decide(
      observed(release({ status: inFlight('running') }), { poll: { kind: 'failed', failure } }),
    );
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'AuthenticationFailed' });
    expect(condition(d.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'AuthenticationFailed' });
    expect(nextStep(d)).toEqual({ requeueAfterMs: 5 * MIN });
    expect(d.status.export?.jobId).toBe('se_2');
  });

  it('hands a transient poll error to the work queue backoff instead of waiting for a change', () => {
    const failure: Failure = { reason: 'ApiUnavailable', message: '503', stalled: false };
    const d = decide(
      observed(release({ status: inFlight('running') }), { poll: { kind: 'failed', failure } }),
    );
    expect(condition(d.status, 'Ready')).toMatchObject({ status: 'False', reason: 'ApiUnavailable' });
    expect(nextStep(d).backoff).toBeInstanceOf(RetryableError);
  });
});

describe('links and versions', () => {
  it('renews the link of the served job once the renewal time has come', () => {
    const r = release({ status: serving({ current: { ...serving().current, renewalTime: at(-1_000) } }) });
    expect(decide(observed(r)).action).toEqual({ kind: 'publish', mode: 'Renew', jobId: 'se_1' });
  });

  it('publishes a pinned version from history with its version to verify', () => {
    const history = [
      { version: V2, jobId: 'se_2', appliedAt: at(-10 * MIN) },
      { version: V1, jobId: 'se_1', appliedAt: at(-59 * MIN) },
    ];
    const r = release({
      generation: 2,
      spec: { pinnedVersion: V1 },
      status: serving({ current: { ...serving().current, version: V2, jobId: 'se_2' }, history }),
    });
    expect(decide(observed(r)).action).toEqual({
      kind: 'publish',
      mode: 'Pin',
      jobId: 'se_1',
      expectVersion: V1,
    });
  });

  it('refuses a pinned version that is not in history, naming the known ones', () => {
    const d = decide(observed(release({ generation: 2, spec: { pinnedVersion: V2 }, status: serving() })));
    expect(d.action).toEqual({ kind: 'none' });
    expect(condition(d.status, 'Ready')).toMatchObject({ reason: 'PinnedVersionUnknown' });
    expect(condition(d.status, 'Ready')?.message).toContain(`known: ${V1}`);
    expect(condition(d.status, 'Stalled')?.status).toBe('True');
  });

  it('a pinned release ignores intervals and triggers but still renews its link', () => {
    const pinned = release({
      spec: { pinnedVersion: V1, interval: '1m' },
      annotations: { [REQUESTED_AT_ANNOTATION]: 'again' },
      status: serving(),
    });
    const d = decide(observed(pinned));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.lastHandledRequestedAt).toBe('again');
    expect(d.requeueAfterMs).toBe(20 * MIN);
    const due = release({
      spec: { pinnedVersion: V1 },
      status: serving({ current: { ...serving().current, renewalTime: at(-1) } }),
    });
    expect(decide(observed(due)).action).toEqual({ kind: 'publish', mode: 'Renew', jobId: 'se_1' });
  });
});

describe('blocked, suspended, deleted', () => {
  const blocked: Failure = {
    reason: 'SecretNotFound',
    message: 'Secret web/key does not exist',
    stalled: true,
    retryAfterMs: 30_000,
  };

  it('reports a missing Secret without calling the API and looks again later', () => {
    const d = decide(observed(release(), { blocked }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(condition(d.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'SecretNotFound',
      message: blocked.message,
    });
    expect(nextStep(d)).toEqual({ requeueAfterMs: 30_000 });
    expect(d.events).toEqual([{ type: 'Warning', reason: 'SecretNotFound', note: blocked.message }]);
  });

  it('does nothing at all while suspended, even when work is due', () => {
    const r = release({
      spec: { suspend: true, interval: '1m' },
      status: serving({ current: { ...serving().current, renewalTime: at(-1) } }),
    });
    const d = decide(observed(r, { blocked }));
    expect(d).toEqual({ action: { kind: 'none' }, status: r.status, events: [] });
  });

  it('does nothing for a release being deleted', () => {
    const r = release({ status: serving() });
    r.metadata.deletionTimestamp = NOW.toISOString();
    expect(decide(observed(r)).action).toEqual({ kind: 'none' });
  });
});

describe('steady state', () => {
  it('is Ready and decides the same status twice (no write when nothing changed)', () => {
    const first = decide(observed(release({ status: serving() })));
    expect(condition(first.status, 'Ready')).toMatchObject({ status: 'True', reason: 'Published' });
    const second = decide({
      source: 'platform',
      now: new Date(NOW.getTime() + 5_000),
      release: release({ status: first.status }),
    });
    expect(second.status).toEqual(first.status);
  });

  it('keeps lastTransitionTime when the status of a condition does not change', () => {
    const first = decide(
      observed(release({ status: inFlight('queued') }), {
        poll: { kind: 'job', state: 'running', progress: 10 },
      }),
    );
    const later = new Date(NOW.getTime() + 3_000);
    const second = decide({
      source: 'platform',
      now: later,
      release: release({ status: first.status }),
      poll: { kind: 'job', state: 'running', progress: 50 },
    });
    expect(condition(second.status, 'Exporting')?.lastTransitionTime).toBe(
      condition(first.status, 'Exporting')?.lastTransitionTime,
    );
    expect(condition(second.status, 'Exporting')?.message).toContain('50%');
  });
});

describe('folding outcomes into status', () => {
  it('records the job id, start time, generation and handled trigger right after a start', () => {
    const r = release({ generation: 4, annotations: { [REQUESTED_AT_ANNOTATION]: 't1' }, status: serving() });
    const { status, events } = afterStart(observed(r), 'se_9', 'queued');
    expect(status.export).toEqual({
      jobId: 'se_9',
      revision: 'contract',
      state: 'queued',
      progress: 0,
      startedAt: NOW.toISOString(),
      generation: 4,
    });
    expect(status.observedGeneration).toBe(4);
    expect(status.lastHandledRequestedAt).toBe('t1');
    expect(status.current?.version).toBe(V1);
    expect(events[0]).toMatchObject({ reason: 'ExportStarted' });
  });

  it('publishes new content: current, history first, export finished, renewal before expiry', () => {
    const r = release({ spec: { renewBefore: '10m' }, status: inFlight('completed', 2_000, serving()) });
    const { status, events } = afterPublish(observed(r), {
      mode: 'NewContent',
      jobId: 'se_2',
      version: V2,
      sizeBytes: 1234,
      expiresAt: new Date(NOW.getTime() + 60 * MIN),
      wrote: true,
    });
    expect(status.current).toEqual({
      version: V2,
      jobId: 'se_2',
      sizeBytes: 1234,
      expiresAt: at(60 * MIN),
      renewalTime: at(50 * MIN),
      appliedAt: NOW.toISOString(),
    });
    expect(status.history?.map((h) => h.version)).toEqual([V2, V1]);
    expect(status.export).toMatchObject({ jobId: 'se_2', finishedAt: NOW.toISOString() });
    expect(condition(status, 'Ready')).toMatchObject({ status: 'True', reason: 'Published' });
    expect(condition(status, 'Exporting')?.status).toBe('False');
    expect(events[0]).toMatchObject({ reason: 'Published' });
  });

  it('keeps identical content as it is: same current, no history entry, Unchanged', () => {
    const r = release({ status: inFlight('completed', 2_000, serving()) });
    const { status, events } = afterPublish(observed(r), {
      mode: 'NewContent',
      jobId: 'se_2',
      version: V1,
      expiresAt: new Date(NOW.getTime() + 60 * MIN),
      wrote: false,
    });
    expect(status.current).toEqual(serving().current);
    expect(status.history).toEqual(serving().history);
    expect(status.export?.finishedAt).toBe(NOW.toISOString());
    expect(events[0]).toMatchObject({ reason: 'Unchanged' });
  });

  it('renews a link: new expiry and renewal time, same version and history', () => {
    const { status, events } = afterPublish(observed(release({ status: serving() })), {
      mode: 'Renew',
      jobId: 'se_1',
      version: V1,
      expiresAt: new Date(NOW.getTime() + 90 * MIN),
      wrote: true,
    });
    expect(status.current).toMatchObject({ version: V1, expiresAt: at(90 * MIN), renewalTime: at(60 * MIN) });
    expect(status.history).toEqual(serving().history);
    expect(events[0]).toMatchObject({ reason: 'LinkRenewed' });
  });

  it('keeps at most 10 history entries, newest first, one per version', () => {
    const history = Array.from({ length: 10 }, (_, i) => ({
      version: `sha256-${String(i).repeat(64)}`,
      jobId: `se_${i}`,
      appliedAt: at(-i * MIN),
    }));
    const { status } = afterPublish(observed(release({ status: serving({ history }) })), {
      mode: 'NewContent',
      jobId: 'se_new',
      version: `sha256-${'3'.repeat(64)}`,
      expiresAt: new Date(NOW.getTime() + MIN),
      wrote: true,
    });
    expect(status.history).toHaveLength(10);
    expect(status.history?.[0]?.jobId).toBe('se_new');
    expect(status.history?.filter((h) => h.version === `sha256-${'3'.repeat(64)}`)).toHaveLength(1);
  });

  it('renews a third of the lifetime before expiry by default, or when renewBefore is too long', () => {
    const exp = new Date(NOW.getTime() + 90 * MIN);
    expect(renewalTime(exp, NOW, undefined).toISOString()).toBe(at(60 * MIN));
    expect(renewalTime(exp, NOW, '2h').toISOString()).toBe(at(60 * MIN));
    expect(renewalTime(exp, NOW, '5m').toISOString()).toBe(at(85 * MIN));
  });

  it('says in the Ready message when renewBefore is not shorter than the link lifetime, and not otherwise', () => {
    const publish = (renewBefore?: string) =>
      afterPublish(observed(release({ spec: renewBefore ? { renewBefore } : {}, status: serving() })), {
        mode: 'Renew',
        jobId: 'se_1',
        version: V1,
        expiresAt: new Date(NOW.getTime() + 90 * MIN),
        wrote: true,
      }).status;
    expect(condition(publish('2h'), 'Ready')?.message).toBe(
      `Serving ${V1}; link renewal at ${at(60 * MIN)} (spec.renewBefore 2h is not shorter than the link's lifetime of 5400 s: renewing a third of the lifetime ahead instead)`,
    );
    expect(condition(publish('5m'), 'Ready')?.message).toBe(`Serving ${V1}; link renewal at ${at(85 * MIN)}`);
    expect(condition(publish(), 'Ready')?.message).toBe(`Serving ${V1}; link renewal at ${at(60 * MIN)}`);
  });
});

describe('target drift', () => {
  it('writes the served version again, with a fresh link, when the target lost it', () => {
    const d = decide(observed(release({ status: serving() }), { targetDrifted: true }));
    expect(d.action).toEqual({ kind: 'publish', mode: 'Repair', jobId: 'se_1' });
  });

  it('announces the repair and keeps history as it is', () => {
    const { status, events } = afterPublish(observed(release({ status: serving() })), {
      mode: 'Repair',
      jobId: 'se_1',
      version: V1,
      expiresAt: new Date(NOW.getTime() + 90 * MIN),
      wrote: true,
    });
    expect(status.history).toEqual(serving().history);
    expect(events[0]).toMatchObject({ type: 'Warning', reason: 'TargetRepaired' });
  });
});

describe('after a failed export', () => {
  it('stays ExportFailed in steady state until an export succeeds', () => {
    const failed = decide(
      observed(release({ status: inFlight('running') }), {
        poll: { kind: 'job', state: 'failed', error: 'boom' },
      }),
    );
    const steady = decide({
      source: 'platform',
      now: new Date(NOW.getTime() + 1_000),
      release: release({ status: failed.status }),
    });
    expect(steady.action).toEqual({ kind: 'none' });
    expect(steady.status).toEqual(failed.status);
    expect(condition(steady.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ExportFailed',
      message: expect.stringMatching(/^Export job se_2 failed: boom; tried again at /),
    });
  });
});

describe('the publish gate', () => {
  const EMPTY = { pages: 0, hasIndex: false };
  const servingPages = (pageCount: number, overrides: Partial<Status> = {}) =>
    serving({ current: { ...serving().current, pageCount }, ...overrides });

  it.each([
    [
      '0 pages and no index',
      EMPTY,
      {},
      10,
      'it has no index.html at its root; it has 0 pages, fewer than the minimum of 1; its page count dropped from 10 to 0 (100%, more than the allowed 50%)',
    ],
    [
      'too few pages for minPages',
      { pages: 4, hasIndex: true },
      { minPages: 5 },
      5,
      'it has 4 pages, fewer than the minimum of 5',
    ],
    [
      'a drop of 60% against the served 10 pages',
      { pages: 4, hasIndex: true },
      {},
      10,
      'its page count dropped from 10 to 4 (60%, more than the allowed 50%)',
    ],
    [
      'the same drop with maxPageDrop 60 (a number)',
      { pages: 4, hasIndex: true },
      { maxPageDrop: 60 },
      10,
      undefined,
    ],
    [
      'the same drop with maxPageDrop "100%"',
      { pages: 4, hasIndex: true },
      { maxPageDrop: '100%' },
      10,
      undefined,
    ],
    ['an empty site with the gate disabled', EMPTY, { disabled: true }, 10, undefined],
  ])('%s', (_what, site, publishGate, served, message) => {
    const r = release({ spec: { publishGate }, status: servingPages(served) });
    expect(judgeNewContent(r, V2, site)).toEqual(
      message === undefined ? { ok: true } : { ok: false, message },
    );
  });

  it('does not judge content that is already served', () => {
    expect(judgeNewContent(release({ status: servingPages(10) }), V1, EMPTY)).toEqual({ ok: true });
  });

  it('has no drop baseline for a version served before page counts were recorded', () => {
    expect(judgeNewContent(release({ status: serving() }), V2, { pages: 1, hasIndex: true })).toEqual({
      ok: true,
    });
  });

  it('a refused export: current unchanged, export handled, Ready=False PublishGateFailed with the numbers, Warning', () => {
    const r = release({ spec: { interval: '24h' }, status: inFlight('completed', 2_000, servingPages(10)) });
    const message = 'its page count dropped from 10 to 4 (60%, more than the allowed 50%)';
    const out = afterPublishGateFailed(observed(r), { jobId: 'se_2', version: V2, message });
    expect(out.status.current).toEqual(servingPages(10).current);
    expect(out.status.history).toEqual(serving().history);
    expect(out.status.export).toMatchObject({
      jobId: 'se_2',
      state: 'completed',
      finishedAt: NOW.toISOString(),
      publishGateFailure: message,
    });
    expect(condition(out.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PublishGateFailed',
      message: expect.stringContaining(`Export job se_2 was not published: ${message}. Still serving ${V1}`),
    });
    // The served version is fine: nothing for the user to fix before the next export.
    expect(condition(out.status, 'Stalled')).toBeUndefined();
    expect(out.events).toEqual([
      {
        type: 'Warning',
        reason: 'PublishGateFailed',
        note: `Export job se_2 (${V2}) was not published: ${message}; still serving ${V1}`,
      },
    ]);
    // Next work: the link renewal in 20 minutes, before the next interval.
    expect(out.requeueAfterMs).toBe(20 * MIN);

    // No re-export until a trigger or the interval; Ready stays PublishGateFailed meanwhile.
    const steady = decide({
      source: 'platform',
      now: new Date(NOW.getTime() + 1_000),
      release: { ...r, status: out.status },
    });
    expect(steady.action).toEqual({ kind: 'none' });
    expect(condition(steady.status, 'Ready')?.reason).toBe('PublishGateFailed');
    const triggered = release({
      spec: { interval: '24h' },
      annotations: { [REQUESTED_AT_ANNOTATION]: 'again' },
      status: out.status,
    });
    expect(decide(observed(triggered)).action).toEqual({ kind: 'start', reason: 'Requested' });
    // A new export clears the failure.
    expect(
      afterStart(observed(triggered), 'se_3', 'queued').status.export?.publishGateFailure,
    ).toBeUndefined();
  });

  it('a renewed link keeps the served page count and the PublishGateFailed condition', () => {
    const refused = afterPublishGateFailed(
      observed(release({ status: inFlight('completed', 2_000, servingPages(10)) })),
      {
        jobId: 'se_2',
        version: V2,
        message: 'x',
      },
    ).status;
    const { status } = afterPublish(observed(release({ status: refused })), {
      mode: 'Renew',
      jobId: 'se_1',
      version: V1,
      expiresAt: new Date(NOW.getTime() + 90 * MIN),
      wrote: true,
    });
    expect(status.current?.pageCount).toBe(10);
    expect(condition(status, 'Ready')?.reason).toBe('PublishGateFailed');
  });

  it('with nothing served, a refused first export is tried again after the retry delay', () => {
    const r = release({ status: inFlight('completed', 2_000) });
    const out = afterPublishGateFailed(observed(r), { jobId: 'se_2', version: V2, message: 'x' });
    expect(condition(out.status, 'Ready')?.message).toContain('Nothing is served yet');
    expect(out.requeueAfterMs).toBe(DEFAULT_TUNABLES.exportRetryMs);
    const later = new Date(NOW.getTime() + DEFAULT_TUNABLES.exportRetryMs);
    expect(decide({ source: 'platform', now: later, release: { ...r, status: out.status } }).action).toEqual({
      kind: 'start',
      reason: 'Retry',
    });
  });

  it('records the page count of what it publishes, in current and history', () => {
    const r = release({ status: inFlight('completed', 2_000, serving()) });
    const { status, events } = afterPublish(observed(r), {
      mode: 'NewContent',
      jobId: 'se_2',
      version: V2,
      pageCount: 12,
      expiresAt: new Date(NOW.getTime() + 60 * MIN),
      wrote: true,
    });
    expect(status.current?.pageCount).toBe(12);
    expect(status.history?.[0]).toMatchObject({ version: V2, pageCount: 12 });
    expect(events[0]?.note).toBe(`Published ${V2} from export job se_2 (12 pages)`);
  });

  it('fills in the baseline when identical content comes back for a version served without one', () => {
    const r = release({ status: inFlight('completed', 2_000, serving()) });
    const { status } = afterPublish(observed(r), {
      mode: 'NewContent',
      jobId: 'se_2',
      version: V1,
      pageCount: 8,
      expiresAt: new Date(NOW.getTime() + 60 * MIN),
      wrote: false,
    });
    expect(status.current).toEqual({ ...serving().current, pageCount: 8 });
  });
});
