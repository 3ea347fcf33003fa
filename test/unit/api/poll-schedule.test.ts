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
const { ceilingMs, backoffCeilingMs, minDelayMs, firstLookMs, blindLookMs, earliestLookMs } =
  DEFAULT_POLL_SCHEDULE;
const running = (samples: ProgressSample[], previousDurationsMs?: number[]): ExportObservations => ({
  startedAt: 0,
  state: 'running',
  samples,
  ...(previousDurationsMs ? { previousDurationsMs } : {}),
});

/** What a job answers `t` ms after its start (queued jobs report no progress). */
type Job = (t: number) => { state: string; progress?: number };

/**
 * Polls `job` on the schedule with an injected clock, folding each answer in as the operator and
 * the CLI do, until a final state; the times of the polls (ms after the start).
 */
function pollTimes(job: Job, previousDurationsMs?: number[]): number[] {
  let o: ExportObservations = { startedAt: 0, ...(previousDurationsMs ? { previousDurationsMs } : {}) };
  const times: number[] = [];
  let now = 0;
  for (let delay = nextPollDelayMs(o, now); delay !== undefined; delay = nextPollDelayMs(o, now)) {
    now += delay;
    times.push(now);
    o = observe(o, job(now), now);
    if (times.length > 500) throw new Error('never stopped polling');
  }
  return times;
}

/** Done after `ms`; queued for `queuedMs`, then progressing evenly (whole percents, below 100) or not at all. */
const job =
  (ms: number, queuedMs = 0, progress: 'even' | 'none' = 'even'): Job =>
  (t) => {
    if (t >= ms) return { state: 'completed', progress: 100 };
    if (t < queuedMs) return { state: 'queued' };
    if (progress === 'none') return { state: 'running' };
    return { state: 'running', progress: Math.min(99, Math.floor(((t - queuedMs) / (ms - queuedMs)) * 100)) };
  };

/** Progressing evenly to 90 % at `stallAt`, then stuck there until done at `ms`. */
const stalling =
  (ms: number, stallAt: number): Job =>
  (t) =>
    t >= ms
      ? { state: 'completed', progress: 100 }
      : { state: 'running', progress: Math.min(90, Math.floor((t / stallAt) * 90)) };

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

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

  it('stops polling at the first look that sees a final state', () => {
    expect(pollTimes(job(500))).toEqual([firstLookMs]);
    expect(pollTimes(() => ({ state: 'failed' }))).toEqual([firstLookMs]);
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
    ['one look says 50 min, from the start', running([{ at: 30 * S, progress: 1 }]), 30 * S],
    [
      'both far',
      running(
        [
          { at: 10 * S, progress: 1 },
          { at: 60 * S, progress: 2 },
        ],
        [60 * MIN],
      ),
      60 * S,
    ],
  ])('never waits longer than the ceiling: %s', (_, o, now) => {
    expect(nextPollDelayMs(o, now)).toBeLessThanOrEqual(ceilingMs);
  });

  it('polls a long job at least every ceiling, and sees its end within 15 s', () => {
    const times = pollTimes(job(45 * MIN, 2 * MIN));
    expect(Math.max(...gaps(times))).toBe(ceilingMs);
    expect(times.at(-1)).toBeGreaterThanOrEqual(45 * MIN);
    expect(times.at(-1)).toBeLessThanOrEqual(45 * MIN + backoffCeilingMs);
    // The platform's sample would make 270 calls.
    expect(times.length).toBeLessThan(60);
  });

  it.each([
    // now (ms after the start) -> delay: the first look, the sample's 10 s, then doubling up to the backoff ceiling.
    [0, firstLookMs],
    [firstLookMs, blindLookMs - firstLookMs],
    [5 * S, 5 * S],
    [blindLookMs, blindLookMs],
    [14 * S, 14 * S],
    [40 * S, backoffCeilingMs],
    [6 * 60 * MIN, backoffCeilingMs],
  ])('falls back to a backoff while nothing is known: %i ms in, waits %i ms', (now, delay) => {
    expect(nextPollDelayMs({ startedAt: 0, state: 'running' }, now)).toBe(delay);
    // Queued (0 %) and still at 0 %: the same.
    expect(nextPollDelayMs(observe({ startedAt: 0 }, { state: 'queued' }, now), now)).toBe(delay);
    expect(nextPollDelayMs(running([{ at: now, progress: 0 }]), now)).toBe(delay);
  });

  it('sees a job that reports no progress within 15 s, from 10 s on', () => {
    const times = pollTimes(job(10 * MIN, 30 * S, 'none'));
    expect(times.slice(0, 4)).toEqual([firstLookMs, blindLookMs, 20 * S, 35 * S]);
    expect(Math.max(...gaps(times))).toBe(backoffCeilingMs);
    expect(times.at(-1)).toBeLessThanOrEqual(10 * MIN + backoffCeilingMs);
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
    // 10 % at 10 s, 90 % at 90 s: due at 100 s; still 90 % at 110 s.
    const o = running([
      { at: 10 * S, progress: 10 },
      { at: 90 * S, progress: 90 },
    ]);
    expect(nextPollDelayMs(o, 90 * S)).toBe(10 * S);
    expect(nextPollDelayMs(observe(o, { state: 'running', progress: 90 }, 100 * S), 100 * S)).toBe(10 * S);
    expect(nextPollDelayMs(observe(o, { state: 'running', progress: 90 }, 110 * S), 110 * S)).toBe(11 * S);
  });

  it.each([
    // export, stalled from, at most calls (the sample: 12, 60, 180)
    [2 * MIN, 80 * S, 8],
    [10 * MIN, 400 * S, 30],
    [30 * MIN, 20 * MIN, 90],
  ])(
    'sees a job of %i ms stalled at 90 percent from %i ms within a tenth of its duration and 15 s, in at most %i calls',
    (ms, stallAt, calls) => {
      const times = pollTimes(stalling(ms, stallAt));
      expect((times.at(-1) as number) - ms).toBeLessThanOrEqual(Math.min(15 * S, ms / 10));
      expect(times.length).toBeLessThanOrEqual(calls);
    },
  );

  it('polls at the end progress points to', () => {
    const o = running([
      { at: 10 * S, progress: 10 },
      { at: 40 * S, progress: 40 },
    ]);
    // 1 %/s: 100 % at 100 s.
    expect(nextPollDelayMs(o, 40 * S)).toBe(60 * S);
    expect(nextPollDelayMs(o, 70 * S)).toBe(30 * S);
  });

  it('takes the earlier of progress and history, and the other once that passed', () => {
    const o = running(
      [
        { at: 10 * S, progress: 10 },
        { at: 40 * S, progress: 40 },
      ],
      [200 * S],
    );
    expect(nextPollDelayMs(o, 80 * S)).toBe(20 * S);
    // At 100 s progress is due but history says 200 s: up to the ceiling.
    expect(nextPollDelayMs(o, 100 * S)).toBe(ceilingMs);
    expect(nextPollDelayMs(o, 150 * S)).toBe(50 * S);
  });

  it('never polls closer than the minimum after the earliest look', () => {
    const o = running([
      { at: 10 * S, progress: 1 },
      { at: 40 * S, progress: 99 },
    ]);
    expect(nextPollDelayMs(o, 40.1 * S)).toBe(minDelayMs);
    // A site whose exports take a moment: first looked at after a quarter second.
    expect(nextPollDelayMs({ startedAt: 0, previousDurationsMs: [50] }, 0)).toBe(earliestLookMs);
  });
});

describe('a first export (nothing known of the site)', () => {
  it.each<[string, Job, number, number[], number]>([
    // name, job, its duration, its first looks, at most calls
    // Small sites are done at the first look.
    ['done in half a second', job(500), 500, [firstLookMs], 1],
    // One look's progress, measured from the start: the next look at the end it points to ...
    ['4 s, progressing from the start', job(4 * S), 4 * S, [firstLookMs, 4 * S], 2],
    // ... unless the backoff would look sooner: that progress may have begun after a queue.
    ['20 s, progressing from the start', job(20 * S), 20 * S, [firstLookMs, blindLookMs, 20 * S], 3],
    // Queued at the first look: at the sample's 10 s, then by progress.
    ['20 s, queued for 2 s', job(20 * S, 2 * S), 20 * S, [firstLookMs, blindLookMs, 20 * S], 3],
    ['30 s, queued for 3 s', job(30 * S, 3 * S), 30 * S, [firstLookMs, blindLookMs, 20 * S], 4],
    // Queued at 10 s too: the first progress, a look that measures its rate, then the end.
    ['2 min, queued for 12 s', job(2 * MIN, 12 * S), 2 * MIN, [firstLookMs, blindLookMs, 20 * S, 35 * S], 6],
    // A look that saw little progress is not trusted further than the backoff would look.
    ['45 s, queued for 4.5 s', job(45 * S, 4.5 * S), 45 * S, [firstLookMs, blindLookMs, 20 * S], 5],
  ])('%s: sees the end within a tenth of its duration', (_, j, ms, first, calls) => {
    const times = pollTimes(j);
    expect(times.slice(0, first.length)).toEqual(first);
    expect(times.length).toBeLessThanOrEqual(calls);
    expect(times.at(-1)).toBeGreaterThanOrEqual(ms);
    expect((times.at(-1) as number) - ms).toBeLessThanOrEqual(Math.max(ms / 10, firstLookMs));
  });
});

describe('what the schedule keeps', () => {
  it('keeps the first progress seen and the last three changes, dropping repeats and 0 % once progress moved twice', () => {
    let kept: ProgressSample[] = [];
    const seen: ProgressSample[][] = [];
    for (const [at, progress] of [
      [1, 0],
      [2, 0],
      [3, 10],
      [4, 20],
      [5, 20],
      [6, 30],
      [7, 40],
      [8, 50],
    ] as const) {
      kept = withSample(kept, { at, progress });
      seen.push(kept);
    }
    // Nothing done yet: the latest such look, the baseline of a guess from the first progress.
    expect(seen[1]).toEqual([{ at: 2, progress: 0 }]);
    expect(seen[2]).toEqual([
      { at: 2, progress: 0 },
      { at: 3, progress: 10 },
    ]);
    expect(seen[3]).toEqual([
      { at: 3, progress: 10 },
      { at: 4, progress: 20 },
    ]);
    expect(kept).toEqual([
      { at: 3, progress: 10 },
      { at: 6, progress: 30 },
      { at: 7, progress: 40 },
      { at: 8, progress: 50 },
    ]);
  });

  it('records a queued job as 0 %, and no sample for a poll without progress or in a final state', () => {
    const o = { startedAt: 0 };
    expect(observe(o, { state: 'queued' }, 5).samples).toEqual([{ at: 5, progress: 0 }]);
    expect(observe(o, { state: 'running' }, 5).samples).toBeUndefined();
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
