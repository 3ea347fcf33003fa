import { describe, expect, it } from 'vitest';
import { RequestLimiter, SENT_TO_PLATFORM_WINDOW_MS } from '../../../src/api/request-limiter.ts';

describe('RequestLimiter', () => {
  it('sent to the platform: lets N requests through per sliding minute (and a second, for latency) and says how long the next one waits', () => {
    let now = 1_000_000;
    const limiter = new RequestLimiter(3, () => now, SENT_TO_PLATFORM_WINDOW_MS);
    expect([limiter.tryTake(), limiter.tryTake()]).toEqual([0, 0]);
    now += 10_000;
    expect(limiter.tryTake()).toBe(0);
    expect(limiter.tryTake()).toBe(51_000);
    expect(limiter.delayMs()).toBe(51_000);
    now += 50_000;
    // A minute after the first two, they still count: their arrivals may be later than their sends.
    expect(limiter.tryTake()).toBe(1_000);
    now += 1_000;
    // The first two left the window: two more fit, the third waits for the one sent at +10 s.
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([0, 0, 10_000]);
  });

  it('of arrivals (the trigger receiver): a minute exactly, so a caller every 10 s within a limit of 6 is never refused', () => {
    let now = 1_000_000;
    const limiter = new RequestLimiter(6, () => now);
    const answers: number[] = [];
    for (let i = 0; i < 13; i++, now += 10_000) answers.push(limiter.tryTake());
    expect(answers).toEqual(Array(13).fill(0));
    // Six within the last minute (+80 s to +130 s): a seventh now waits for the one at +80 s to leave.
    expect([limiter.tryTake(), limiter.tryTake()]).toEqual([0, 10_000]);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new RequestLimiter(0)).toThrow(/positive integer/);
    expect(() => new RequestLimiter(1.5)).toThrow(/positive integer/);
  });
});
