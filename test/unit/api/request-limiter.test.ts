import { describe, expect, it } from 'vitest';
import { RequestLimiter } from '../../../src/api/request-limiter.ts';

describe('RequestLimiter', () => {
  it('lets N requests through per sliding minute (and a second, for latency) and says how long the next one waits', () => {
    let now = 1_000_000;
    const limiter = new RequestLimiter(3, () => now);
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

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new RequestLimiter(0)).toThrow(/positive integer/);
    expect(() => new RequestLimiter(1.5)).toThrow(/positive integer/);
  });
});
