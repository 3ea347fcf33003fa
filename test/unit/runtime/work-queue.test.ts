import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenBucket, WorkQueue } from '../../../src/runtime/work-queue.ts';

// Resolves when `p` settles within the current fake-timer tick, else reports 'pending'.
async function state<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

describe('TokenBucket', () => {
  it('allows a burst, then spaces reservations at the rate, and refills over time', () => {
    const b = new TokenBucket(10, 3, 0);
    expect([b.reserve(0), b.reserve(0), b.reserve(0)]).toEqual([0, 0, 0]);
    expect(b.reserve(0)).toBe(100);
    expect(b.reserve(0)).toBe(200);
    // 1 s later the debt of 2 tokens is repaid and 8 more accrue, capped at the burst of 3.
    expect(b.reserve(1000)).toBe(0);
    expect(b.reserve(1000)).toBe(0);
    expect(b.reserve(1000)).toBe(0);
    expect(b.reserve(1000)).toBe(100);
  });
});

describe('WorkQueue', () => {
  let q: WorkQueue;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, qps: 1000, burst: 1000 });
  });
  afterEach(() => {
    q.shutDown();
    vi.useRealTimers();
  });

  it('hands out keys in FIFO order and dedups keys that are queued', async () => {
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.len()).toBe(0);
  });

  it('re-queues a key added while processing only after done, so no two workers hold it', async () => {
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    const second = q.get();
    expect(await state(second)).toBe('pending');
    q.done('a');
    expect(await second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('does not re-queue a key that was not added again while processing', async () => {
    q.add('a');
    await q.get();
    q.done('a');
    expect(q.len()).toBe(0);
    expect(await state(q.get())).toBe('pending');
  });

  it('wakes a waiting get when a key arrives', async () => {
    const p = q.get();
    expect(await state(p)).toBe('pending');
    q.add('x');
    expect(await p).toBe('x');
  });

  it('addAfter delays the key, and the earliest of several delays wins', async () => {
    q.addAfter('a', 500);
    q.addAfter('a', 200);
    q.addAfter('a', 900);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(199);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    // The later timers were replaced, not kept: nothing fires at 500 or 900.
    await vi.advanceTimersByTimeAsync(1000);
    expect(q.len()).toBe(0);
  });

  it('addAfter beyond what a Node timer holds (24.8 days) waits the full time', async () => {
    // A link that lives about 37 days is renewed after about 25: that requeue must not fire at once.
    const day = 86_400_000;
    q.addAfter('a', 25 * day);
    await vi.advanceTimersByTimeAsync(day);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(24 * day - 1);
    expect(q.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.len()).toBe(1);
    // An earlier delay still replaces a long one.
    expect(await q.get()).toBe('a');
    q.done('a');
    q.addAfter('a', 40 * day);
    q.addAfter('a', 10);
    await vi.advanceTimersByTimeAsync(10);
    expect(q.len()).toBe(1);
  });

  it('many delayed keys wait under one timer and come due in order of their times', async () => {
    for (let i = 0; i < 100; i++) q.addAfter(`k${i}`, 1000 + ((i * 37) % 100) * 10);
    q.addAfter('k5', 500); // an earlier time for a key already waiting replaces its later one
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(q.len()).toBe(1);
    const due: string[] = [await (q.get() as Promise<string>)];
    await vi.advanceTimersByTimeAsync(2000);
    while (q.len() > 0) due.push(await (q.get() as Promise<string>));
    expect(due).toHaveLength(100);
    expect(due[0]).toBe('k5');
    const at = (k: string) => ((Number(k.slice(1)) * 37) % 100) * 10;
    for (let i = 2; i < due.length; i++)
      expect(at(due[i] as string)).toBeGreaterThanOrEqual(at(due[i - 1] as string));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('addAfter with a non-positive delay adds at once', () => {
    q.addAfter('a', 0);
    expect(q.len()).toBe(1);
  });

  it('addRateLimited backs off exponentially per key until forget', async () => {
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = Date.now();
      q.addRateLimited('a');
      while (q.len() === 0) await vi.advanceTimersByTimeAsync(10);
      delays.push(Date.now() - start);
      await q.get();
      q.done('a');
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
    expect(q.numRequeues('a')).toBe(5);
    // Another key has its own backoff.
    q.addRateLimited('b');
    await vi.advanceTimersByTimeAsync(100);
    expect(q.len()).toBe(1);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    q.addRateLimited('a');
    await vi.advanceTimersByTimeAsync(100);
    expect(q.len()).toBe(2);
  });

  it('applies the global rate limit when it is slower than the per-key backoff', async () => {
    const limited = new WorkQueue({ baseDelayMs: 1, maxDelayMs: 1, qps: 2, burst: 1 });
    for (const k of ['a', 'b', 'c']) limited.addRateLimited(k);
    await vi.advanceTimersByTimeAsync(1);
    expect(limited.len()).toBe(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(limited.len()).toBe(2);
    await vi.advanceTimersByTimeAsync(500);
    expect(limited.len()).toBe(3);
    limited.shutDown();
  });

  it('shutDown resolves waiting gets with undefined, drops delayed keys and ignores adds', async () => {
    const p = q.get();
    q.addAfter('later', 100);
    q.shutDown();
    expect(await p).toBeUndefined();
    q.add('x');
    await vi.advanceTimersByTimeAsync(200);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
    expect(q.isShuttingDown()).toBe(true);
  });

  it('keeps many concurrent workers on distinct keys', async () => {
    const held = new Set<string>();
    let clash = false;
    let processed = 0;
    const worker = async () => {
      for (;;) {
        const key = await q.get();
        if (key === undefined) return;
        if (held.has(key)) clash = true;
        held.add(key);
        await vi.advanceTimersByTimeAsync(1);
        held.delete(key);
        processed++;
        q.done(key);
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    for (let i = 0; i < 200; i++) q.add(`k${i % 5}`);
    while (q.len() > 0) await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(10);
    q.shutDown();
    await Promise.all(workers);
    expect(clash).toBe(false);
    expect(processed).toBeGreaterThanOrEqual(5);
    expect(processed).toBeLessThanOrEqual(200);
  });
});
