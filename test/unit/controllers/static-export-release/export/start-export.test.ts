// The start's outcome, folded (pure): what each answer of the start call makes of the release.
import { describe, expect, it } from 'vitest';
import {
  busyWaitMs,
  foldStart,
} from '../../../../../src/controllers/static-export-release/export/start-export.ts';
import { at, MIN, NOW, release, servingV1 } from '../../../../support/fixtures/release-fixtures.ts';

const MARK = { phase: 'Starting' as const, since: at(0) };
const marked = () =>
  release({ status: { ...servingV1(), start: MARK, recentStarts: [MARK.since, at(-30 * MIN)] } });

describe('foldStart', () => {
  it('started: the job is recorded, the mark goes, the job is looked at soon', () => {
    const step = foldStart(
      { now: NOW, release: marked() },
      { kind: 'started', jobId: 'se_2', state: 'queued', at: NOW },
    );
    expect(step.kind).toBe('commit');
    if (step.kind !== 'commit') return;
    expect(step.status.start).toBeUndefined();
    expect(step.status.export).toMatchObject({
      jobId: 'se_2',
      state: 'queued',
      startedAt: NOW.toISOString(),
    });
    expect(step.events.map((e) => e.reason)).toEqual(['ExportStarted']);
    expect(step.requeueAfterMs).toBeGreaterThanOrEqual(0);
    expect(step.busyUntil).toBeUndefined();
  });

  it("busy (409): the mark goes, the project is held as long as the site's exports take, the start kept", () => {
    const r = marked();
    const step = foldStart({ now: NOW, release: r }, { kind: 'busy' });
    const waitMs = busyWaitMs(r.status ?? {});
    expect(step).toMatchObject({ kind: 'commit', busyUntil: NOW.getTime() + waitMs });
    if (step.kind !== 'commit') return;
    expect(step.status.start).toBeUndefined();
    expect(step.status.waiting).toMatchObject({
      reason: 'ExportBusy',
      until: new Date(NOW.getTime() + waitMs).toISOString(),
    });
    expect(step.status.recentStarts).toEqual(r.status?.recentStarts);
    expect(step.events.map((e) => e.reason)).toEqual(['ExportBusy']);
  });

  it('limited (429): the mark goes, the release waits for the group until the budget allows', () => {
    const until = NOW.getTime() + 20 * MIN;
    const step = foldStart({ now: NOW, release: marked() }, { kind: 'limited', until });
    expect(step.kind).toBe('commit');
    if (step.kind !== 'commit') return;
    expect(step.status.start).toBeUndefined();
    expect(step.status.waiting).toMatchObject({
      reason: 'WaitingForStartBudget',
      refusedUntil: at(20 * MIN),
    });
    expect(step.events.map((e) => e.reason)).toEqual(['RateLimited']);
    expect(step.requeueAfterMs).toBeLessThanOrEqual(20 * MIN);
  });

  it('failed, may have started: the mark stays (StartOutcomeUnknown next), and the start stays counted', () => {
    const r = marked();
    const error = new Error('socket hang up');
    const step = foldStart({ now: NOW, release: r }, { kind: 'failed', mayHaveStarted: true, error });
    expect(step).toMatchObject({ kind: 'fail', cause: error });
    if (step.kind !== 'fail') return;
    expect(step.status.start).toEqual(MARK);
    expect(step.status.recentStarts).toEqual(r.status?.recentStarts);
  });

  it('failed, certainly not started: the mark goes, and so does the start recorded with it', () => {
    const error = new Error('401: the key was refused');
    const step = foldStart({ now: NOW, release: marked() }, { kind: 'failed', mayHaveStarted: false, error });
    expect(step.kind).toBe('fail');
    if (step.kind !== 'fail') return;
    expect(step.status.start).toBeUndefined();
    expect(step.status.recentStarts).toEqual([at(-30 * MIN)]);
    expect(step.failure.message).not.toContain('mint_');
  });
});
