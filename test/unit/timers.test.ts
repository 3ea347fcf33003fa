import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  backoff,
  deadline,
  MAX_TIMER_MS,
  pause,
  setLongInterval,
  setLongTimeout,
  timeoutSignal,
  wait,
} from '../../src/timers.ts';

const DAY = 86_400_000;

describe('long timers', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('setLongTimeout fires once, after the full delay, however long', async () => {
    const fired: number[] = [];
    const start = Date.now();
    setLongTimeout(() => fired.push(Date.now() - start), 60 * DAY);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(60 * DAY);
    expect(fired).toEqual([60 * DAY]);
  });

  it('setLongTimeout can be cleared between chunks', async () => {
    let fired = false;
    const t = setLongTimeout(() => {
      fired = true;
    }, 30 * DAY);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + DAY);
    t.clear();
    await vi.advanceTimersByTimeAsync(30 * DAY);
    expect(fired).toBe(false);
  });

  it('setLongInterval repeats at its long period until cleared', async () => {
    let runs = 0;
    const t = setLongInterval(() => runs++, 26 * DAY);
    await vi.advanceTimersByTimeAsync(26 * DAY - 1);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(26 * DAY);
    expect(runs).toBe(2);
    t.clear();
    await vi.advanceTimersByTimeAsync(60 * DAY);
    expect(runs).toBe(2);
  });

  it('wait resolves true after a long delay, false at once when a signal aborts', async () => {
    let done: boolean | undefined;
    void wait(30 * DAY).then((v) => {
      done = v;
    });
    await vi.advanceTimersByTimeAsync(DAY);
    expect(done).toBeUndefined();
    await vi.advanceTimersByTimeAsync(29 * DAY);
    expect(done).toBe(true);

    const stop = new AbortController();
    const waiting = wait(30 * DAY, undefined, stop.signal);
    stop.abort();
    expect(await waiting).toBe(false);
    expect(await wait(10, stop.signal)).toBe(false);
  });

  describe('deadline', () => {
    it('aborts at the deadline with a TimeoutError, and says the deadline did it', async () => {
      const d = deadline(1_000, new AbortController().signal);
      await vi.advanceTimersByTimeAsync(999);
      expect(d.signal.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(d.signal.aborted).toBe(true);
      expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
      expect(d.expired()).toBe(true);
    });

    it('aborts with the parent, with its reason, and not as expired', async () => {
      const parent = new AbortController();
      const d = deadline(1_000, parent.signal);
      parent.abort(new Error('deleted'));
      expect((d.signal.reason as Error).message).toBe('deleted');
      await vi.advanceTimersByTimeAsync(2_000);
      expect(d.expired()).toBe(false);
      const late = deadline(1_000, parent.signal);
      expect(late.signal.aborted).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('once disposed holds no timer and ignores the parent', async () => {
      const parent = new AbortController();
      const d = deadline(30 * 60_000, parent.signal);
      expect(vi.getTimerCount()).toBe(1);
      d.dispose();
      expect(vi.getTimerCount()).toBe(0);
      parent.abort();
      expect(d.signal.aborted).toBe(false);
    });
  });
});

describe('timeoutSignal', () => {
  it('does not abort at once for a delay beyond what a Node timer holds', async () => {
    const signal = timeoutSignal(40 * DAY);
    await new Promise((r) => setTimeout(r, 20));
    expect(signal.aborted).toBe(false);
  });
});

describe('backoff', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  // The work queue's per-key numbers (1 s doubling to 5 min, no jitter).
  it('doubles from the base and caps', () => {
    const policy = { base: 1000, max: 300_000 };
    expect([0, 1, 2, 3].map((n) => backoff(n, policy))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoff(9, policy)).toBe(300_000);
    expect(backoff(10_000, policy)).toBe(300_000);
  });

  it('never overflows: a base of 0 stays 0 and no cap keeps doubling to a finite number', () => {
    expect(backoff(10_000, { base: 0, max: 1000 })).toBe(0);
    expect(backoff(2, { base: 200, max: Number.POSITIVE_INFINITY })).toBe(800);
    expect(Number.isFinite(backoff(10_000, { base: 200, max: Number.POSITIVE_INFINITY }))).toBe(true);
  });

  it('spreads the capped delay by its jitter: full [0, d), equal [d/2, d), a fraction around d', () => {
    const policy = { base: 500, max: 20_000 };
    const at = (random: number, jitter: 'full' | 'equal' | number) => {
      vi.spyOn(Math, 'random').mockReturnValue(random);
      return backoff(3, { ...policy, jitter });
    };
    expect([at(0, 'full'), at(0.5, 'full'), at(0.999, 'full')]).toEqual([0, 2000, 3996]);
    expect([at(0, 'equal'), at(0.5, 'equal')]).toEqual([2000, 3000]);
    for (const [random, delay] of [
      [0, 3200],
      [0.5, 4000],
      [1, 4800],
    ] as const)
      expect(at(random, 0.2)).toBeCloseTo(delay, 6);
    // Jitter applies after the cap: a fraction may go past it, full and equal never do.
    vi.spyOn(Math, 'random').mockReturnValue(1);
    expect(backoff(30, { ...policy, jitter: 0.2 })).toBeCloseTo(24_000, 6);
    expect(backoff(30, { ...policy, jitter: 'full' })).toBe(20_000);
  });
});

describe('pause', () => {
  it('resolves after the delay', async () => {
    const started = performance.now();
    await pause(30, new AbortController().signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it("rejects at once with the signal's own reason, aborted before or while it waits", async () => {
    const stop = new AbortController();
    const reason = new Error('release deleted');
    const started = performance.now();
    const waiting = pause(60_000, stop.signal);
    setTimeout(() => stop.abort(reason), 10);
    await expect(waiting).rejects.toBe(reason);
    await expect(pause(60_000, stop.signal)).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
