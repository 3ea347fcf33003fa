import { describe, expect, it } from 'vitest';
import { HOUR_MS, SlidingWindow, windowDelayMs } from '../../../src/api/sliding-window.ts';

describe('the sliding window', () => {
  it('lets one more in once the limit-th newest event has left the window', () => {
    expect(windowDelayMs([0, 10, 20], 3, 30, 100)).toBe(70);
    expect(windowDelayMs([0, 10, 20], 2, 30, 100)).toBe(80);
    expect(windowDelayMs([0, 10, 20], 4, 30, 100)).toBe(0);
    // An event exactly a window old has left it.
    expect(windowDelayMs([0], 1, 100, 100)).toBe(0);
  });

  it('keeps events in time order, drops them as time passes, and takes one back', () => {
    let now = 1_000;
    const w = new SlidingWindow<string>(HOUR_MS, () => now);
    w.add(900, 'b');
    const early = w.add(500, 'a');
    expect(w.add(now - HOUR_MS, 'too old')).toBeUndefined();
    expect(w.recent().map((e) => e.item)).toEqual(['a', 'b']);
    expect(w.delayMs(2)).toBe(500 + HOUR_MS - now);
    if (early) w.remove(early);
    expect(w.delayMs(2)).toBe(0);
    now = 900 + HOUR_MS;
    expect(w.count()).toBe(0);
  });
});
