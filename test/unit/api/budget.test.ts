import { describe, expect, it } from 'vitest';
import { AgentJobBudget } from '../../../src/api/index.ts';

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('AgentJobBudget', () => {
  it('allows 100 creations per hour per project by default, then says when the next is allowed', () => {
    const c = clock();
    const budget = new AgentJobBudget({ now: c.now });
    for (let i = 0; i < 100; i++) {
      expect(budget.tryReserve('p1'), `slot ${i}`).toBeDefined();
      c.t += 1000;
    }
    expect(budget.remaining('p1')).toBe(0);
    expect(budget.tryReserve('p1')).toBeUndefined();
    // The first slot (taken at 1_000_000) frees one hour later.
    expect(budget.nextAllowedAt('p1').getTime()).toBe(1_000_000 + 3_600_000);
    expect(budget.delayMs('p1')).toBe(1_000_000 + 3_600_000 - c.t);
    // Other projects have their own window.
    expect(budget.tryReserve('p2')).toBeDefined();
  });

  it('slides: slots free up one by one as they age out', () => {
    const c = clock();
    const budget = new AgentJobBudget({ limit: 3, windowMs: 10_000, now: c.now });
    for (const step of [0, 1000, 1000]) {
      c.t += step;
      expect(budget.tryReserve('p')).toBeDefined();
    }
    expect(budget.delayMs('p')).toBe(8000);
    c.t += 8000;
    expect(budget.delayMs('p')).toBe(0);
    expect(budget.tryReserve('p')).toBeDefined();
    expect(budget.delayMs('p')).toBe(1000);
  });

  it('gives a released slot back', () => {
    const budget = new AgentJobBudget({ limit: 1, now: clock().now });
    const slot = budget.tryReserve('p');
    expect(budget.tryReserve('p')).toBeUndefined();
    slot?.release();
    expect(budget.tryReserve('p')).toBeDefined();
  });

  it('honours a server-side block', () => {
    const c = clock();
    const budget = new AgentJobBudget({ now: c.now });
    budget.blockFor('p', 5000);
    expect(budget.delayMs('p')).toBe(5000);
    expect(budget.tryReserve('p')).toBeUndefined();
    c.t += 5000;
    expect(budget.tryReserve('p')).toBeDefined();
  });

  it('counts creations made before a restart, and ignores those older than the window', () => {
    const c = clock(10_000_000);
    const budget = new AgentJobBudget({ limit: 2, windowMs: 3_600_000, now: c.now });
    budget.recordPast('p1', c.t - 4_000_000); // outside the window
    budget.recordPast('p1', c.t - 1_000_000);
    expect(budget.remaining('p1')).toBe(1);
    expect(budget.tryReserve('p1')).toBeDefined();
    expect(budget.tryReserve('p1')).toBeUndefined();
    // The recorded one frees first: it is the oldest.
    expect(budget.delayMs('p1')).toBe(3_600_000 - 1_000_000);
  });
});
