import { describe, expect, it } from 'vitest';
import {
  completedDurationMs,
  DEFAULT_POLL_SCHEDULE,
  type ExportObservations,
  nextPollDelayMs,
  observe,
  type ProgressSample,
  withSample,
} from '../../../src/api/poll-schedule.ts';

const S = 1_000;
const MIN = 60 * S;
const { ceilingMs, backoffCeilingMs, minDelayMs } = DEFAULT_POLL_SCHEDULE;
const running = (samples: ProgressSample[], previousDurationsMs?: number[]): ExportObservations => ({
  startedAt: 0,
  state: 'running',
  samples,
  ...(previousDurationsMs ? { previousDurationsMs } : {}),
});

describe('the export poll schedule', () => {
  it.each([
    ['completed', undefined],
    ['failed', undefined],
    ['completed', [10 * MIN]],
    ['failed', [10 * S]],
  ])('never polls a job that is %s (history %j)', (state, history) => {
    const o = { ...running([{ at: 10 * S, progress: 5 }], history), state };
    for (const now of [0, 1 * S, 30 * S, 2 * MIN, 3 * 60 * MIN])
      expect(nextPollDelayMs(o, now)).toBeUndefined();
  });

  it.each<[string, ExportObservations, number]>([
    ['history says 2 h', { startedAt: 0, previousDurationsMs: [2 * 60 * MIN] }, 1 * S],
    [
      'progress says 50 min',
      running([
        { at: 60 * S, progress: 1 },
        { at: 120 * S, progress: 3 },
      ]),
      120 * S,
    ],
    [
      'both far',
      running(
        [
          { at: 0, progress: 0 },
          { at: 60 * S, progress: 1 },
        ],
        [60 * MIN],
      ),
      60 * S,
    ],
  ])('never waits longer than the ceiling: %s', (_, o, now) => {
    expect(nextPollDelayMs(o, now)).toBe(ceilingMs);
  });

  it.each([
    // now (ms after the start) -> delay: the first look, then doubling up to the backoff ceiling.
    [0, 250],
    [100, 150],
    [250, minDelayMs],
    [2 * S, 2 * S],
    [5 * S, 5 * S],
    [14 * S, 14 * S],
    [40 * S, backoffCeilingMs],
    [6 * 60 * MIN, backoffCeilingMs],
  ])('backs off while no progress is reported and nothing is known: %i ms in, waits %i ms', (now, delay) => {
    expect(nextPollDelayMs({ startedAt: 0, state: 'running' }, now)).toBe(delay);
    // A single progress value gives no rate: the same.
    if (now >= 250) expect(nextPollDelayMs(running([{ at: now, progress: 7 }]), now)).toBe(delay);
  });

  it.each([
    // The history promised 100 s; now -> delay, at most a tenth of the time elapsed and 15 s.
    [100 * S, minDelayMs],
    [101 * S, minDelayMs],
    [103 * S, 3 * S],
    [108 * S, 8 * S],
    [130 * S, 13 * S],
    [20 * MIN, backoffCeilingMs],
  ])('once overdue polls closer again: %i ms in, waits %i ms', (now, delay) => {
    expect(nextPollDelayMs({ startedAt: 0, state: 'running', previousDurationsMs: [100 * S] }, now)).toBe(
      delay,
    );
  });

  it('backs off from the last progress change once progress stalls past its estimate', () => {
    // 0 % at 10 s, 90 % at 100 s: due at 110 s; still 90 % at 120 s.
    const o = running([
      { at: 10 * S, progress: 0 },
      { at: 100 * S, progress: 90 },
    ]);
    expect(nextPollDelayMs(o, 100 * S)).toBe(10 * S);
    expect(nextPollDelayMs(observe(o, { state: 'running', progress: 90 }, 120 * S), 120 * S)).toBe(12 * S);
  });

  it('polls at the end progress points to, halving the way there', () => {
    const o = running([
      { at: 10 * S, progress: 0 },
      { at: 40 * S, progress: 30 },
    ]);
    // 1 %/s: 100 % at 110 s. 70 s away: half; 50 s away: there.
    expect(nextPollDelayMs(o, 40 * S)).toBe(35 * S);
    expect(nextPollDelayMs(o, 60 * S)).toBe(50 * S);
  });

  it('takes the earlier of progress and history, and the other once that passed', () => {
    const o = running(
      [
        { at: 10 * S, progress: 0 },
        { at: 40 * S, progress: 30 },
      ],
      [200 * S],
    );
    expect(nextPollDelayMs(o, 80 * S)).toBe(30 * S);
    // At 110 s progress is due but history says 200 s: half way there.
    expect(nextPollDelayMs(o, 110 * S)).toBe(45 * S);
  });

  it('never polls closer than the minimum after the first look', () => {
    const o = running([
      { at: 10 * S, progress: 0 },
      { at: 40 * S, progress: 99 },
    ]);
    expect(nextPollDelayMs(o, 40.1 * S)).toBe(minDelayMs);
  });
});

describe('what the schedule keeps', () => {
  it('keeps the first sample and the last three changes, dropping repeats', () => {
    let kept: ProgressSample[] = [];
    for (const [at, progress] of [
      [1, 0],
      [2, 0],
      [3, 10],
      [4, 20],
      [5, 20],
      [6, 30],
      [7, 40],
    ] as const)
      kept = withSample(kept, { at, progress });
    expect(kept).toEqual([
      { at: 1, progress: 0 },
      { at: 4, progress: 20 },
      { at: 6, progress: 30 },
      { at: 7, progress: 40 },
    ]);
  });

  it('records no sample for a poll without progress or in a final state', () => {
    const o = { startedAt: 0 };
    expect(observe(o, { state: 'queued' }, 5).samples).toBeUndefined();
    expect(observe(o, { state: 'completed', progress: 100 }, 5)).toEqual({
      startedAt: 0,
      state: 'completed',
    });
  });

  it.each([
    [{ createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:01:30Z' }, 90 * S],
    [{ createdAt: '2026-01-01T00:00:00Z' }, 100 * S],
    [{ createdAt: 'yesterday', updatedAt: 'today' }, 100 * S],
    // An updatedAt before createdAt is not believed.
    [{ createdAt: '2026-01-01T00:01:00Z', updatedAt: '2026-01-01T00:00:00Z' }, 100 * S],
  ])('a completed job %j took %i ms', (job, ms) => {
    expect(completedDurationMs(job, 5 * S, 105 * S)).toBe(ms);
  });
});
