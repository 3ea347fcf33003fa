// The shared hourly start budget of the current export API: one sliding window and one queue per
// group, a manual request ahead of scheduled starts, the longest waiting next, a 409's slot given
// back, a 429 blocking the group, starts recorded before a restart counted once.
import { describe, expect, it } from 'vitest';
import { StartBudgets } from '../../../src/controllers/static-export-release/start-budget.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

function budgets(limit = 3) {
  let t = Date.parse('2026-11-27T12:00:00Z');
  const woken: string[] = [];
  const b = new StartBudgets({ limit, now: () => t, wake: (m) => woken.push(m) });
  return { b, woken, now: () => t, advance: (ms: number) => (t += ms) };
}

const scheduled = (dueAt: number) => ({ dueAt, requested: false });

describe('StartBudgets', () => {
  it('allows the limit in the window, then gives each waiter the slot of the start that ages out', () => {
    const { b, now, advance } = budgets();
    for (const m of ['a', 'b', 'c']) {
      expect(b.view('g', m).slotAt(scheduled(now()), now())).toBe(now());
      b.take('g', m);
      advance(MIN);
    }
    const t0 = now() - 3 * MIN;
    // Full: the first in line gets the slot of the oldest start, the second the next one.
    b.wait('g', 'd', scheduled(now() - 10 * MIN));
    expect(b.view('g', 'e').slotAt(scheduled(now()), now())).toBe(t0 + MIN + HOUR);
    expect(b.view('g', 'd').slotAt(scheduled(now()), now())).toBe(t0 + HOUR);
    expect(b.remaining('g')).toBe(0);
    expect(b.waiting('g')).toBe(1);
    // Asked on the decision's clock (read a moment before the budget's): a free slot is now.
    expect(b.view('other', 'x').slotAt(scheduled(now() - 5), now() - 5)).toBe(now() - 5);
    // Another group is untouched.
    expect(b.view('other', 'x').slotAt(scheduled(now()), now())).toBe(now());
    // An hour after the second start, two have aged out.
    advance(HOUR - 2 * MIN);
    expect(b.remaining('g')).toBe(2);
  });

  it('gives the waiters beyond the free starts the slots of the starts those ahead make now', () => {
    // 20 sites wanting 10 starts an hour: the 12th in line starts when the first 10 age out, an
    // hour from now, not a whole window for each waiter beyond the free ones.
    const { b, now } = budgets(10);
    for (let i = 0; i < 11; i++) b.wait('g', `w${i}`, scheduled(now() - HOUR + i));
    expect(b.view('g', 'w9').slotAt(scheduled(now()), now())).toBe(now());
    expect(b.view('g', 'late').slotAt(scheduled(now()), now())).toBe(now() + HOUR);
    b.take('g', 'x');
    expect(b.view('g', 'w10').slotAt(scheduled(now()), now())).toBe(now() + HOUR);
  });

  it('puts a manual request ahead of scheduled starts, and the earliest due first among those', () => {
    const { b, now } = budgets(1);
    b.take('g', 'x');
    b.wait('g', 'late', scheduled(now() - MIN));
    b.wait('g', 'early', scheduled(now() - 30 * MIN));
    const slots = (m: string, ask = scheduled(now())) => b.view('g', m).slotAt(ask, now());
    expect(slots('early')).toBeLessThan(slots('late'));
    // A later ask keeps the waiter's first due time: waiting longer never moves it back.
    expect(slots('early', scheduled(now()))).toBe(slots('early', scheduled(now() - 30 * MIN)));
    b.wait('g', 'manual', { dueAt: now(), requested: true });
    expect(slots('manual')).toBeLessThan(slots('early'));
  });

  it('gives a slot back (nothing was sent) and wakes the first in line', () => {
    const { b, woken, now } = budgets(1);
    const slot = b.take('g', 'a');
    b.wait('g', 'b', scheduled(now()));
    expect(b.view('g', 'b').slotAt(scheduled(now()), now())).toBeGreaterThan(now());
    slot.release();
    expect(woken).toEqual(['b']);
    expect(b.view('g', 'b').slotAt(scheduled(now()), now())).toBe(now());
  });

  it('blocks the group after a 429: until Retry-After, else until its oldest start ages out, else the whole window', () => {
    const { b, now, advance } = budgets(5);
    expect(b.refused('g', 90_000)).toBe(now() + 90_000);
    expect(b.remaining('g')).toBe(0);
    expect(b.view('g', 'a').slotAt(scheduled(now()), now())).toBe(now() + 90_000);
    // Nothing counted here: others spent the hour, so the whole window is waited.
    expect(b.refused('fresh', undefined)).toBe(now() + HOUR);
    b.take('counted', 'a');
    advance(50 * MIN);
    expect(b.refused('counted', undefined)).toBe(now() + 10 * MIN);
    // Never a loop: at least a minute.
    advance(10 * MIN - 1_000);
    expect(b.refused('counted2', 0)).toBe(now() + MIN);
  });

  it('counts a start recorded before a restart once, and not when it is older than the window', () => {
    const { b, now } = budgets(3);
    b.recordPast('g', 'a', now() - 10 * MIN);
    b.recordPast('g', 'a', now() - 10 * MIN);
    b.recordPast('g', 'b', now() - 2 * HOUR);
    expect(b.remaining('g')).toBe(2);
  });

  it('says when the intervals want more than the budget, once, with the shortest interval that fits', () => {
    const { b } = budgets(10);
    for (let i = 0; i < 20; i++) b.declare(`r${i}`, 'g', { intervalMs: 60 * MIN });
    const v = b.view('g', 'r0');
    expect(v.overcommit).toEqual({ sites: 20, wanted: 20, fitsMinutes: 120, fairMinutes: 120 });
    expect(v.announce).toBe(true);
    b.announced('g');
    expect(b.view('g', 'r0').announce).toBe(false);
    // More sites joining an overcommitted group are not told again.
    b.declare('r20', 'g', { intervalMs: 60 * MIN });
    expect(b.view('g', 'r0').announce).toBe(false);
    // Triggered only: no demand of its own.
    b.declare('manual', 'g', {});
    expect(b.view('g', 'r0').overcommit?.wanted).toBe(21);
    for (let i = 0; i < 13; i++) b.leave(`r${i}`);
    expect(b.view('g', 'r13').overcommit).toBeUndefined();
    // Overcommitted anew after fitting: told again.
    for (let i = 0; i < 13; i++) b.declare(`r${i}`, 'g', { intervalMs: 60 * MIN });
    expect(b.view('g', 'r0').announce).toBe(true);
  });

  it('counts the releases that have waited longer than their interval', () => {
    const { b, now, advance } = budgets(1);
    b.declare('a', 'g', { intervalMs: 30 * MIN });
    b.declare('b', 'g', { intervalMs: 2 * HOUR });
    b.take('g', 'x');
    b.wait('g', 'a', scheduled(now()));
    b.wait('g', 'b', scheduled(now()));
    advance(31 * MIN);
    expect(b.overdue('g')).toBe(1);
    b.leave('a');
    expect(b.overdue('g')).toBe(0);
    expect(b.waiting('g')).toBe(1);
  });

  it('stretches the short intervals of an overcommitted group to its fair one; a long interval keeps its own', () => {
    const { b, now } = budgets(10);
    // 4 x 30m, 8 x 1h, 8 x 2h want 20 an hour: every interval shorter than 2h waits 2h.
    for (let i = 0; i < 4; i++) b.declare(`half${i}`, 'g', { intervalMs: 30 * MIN });
    for (let i = 0; i < 8; i++) b.declare(`hour${i}`, 'g', { intervalMs: HOUR });
    for (let i = 0; i < 8; i++) b.declare(`two${i}`, 'g', { intervalMs: 2 * HOUR });
    expect(b.view('g', 'half0').overcommit).toMatchObject({ fairMinutes: 120, fitsMinutes: 120 });
    const last = now() - 30 * MIN;
    const slot = b.view('g', 'half0').slotAt({ dueAt: now(), requested: false, lastStart: last }, now());
    expect(slot).toBe(last + 2 * HOUR);
    // A request is never stretched.
    expect(b.view('g', 'half0').slotAt({ dueAt: now(), requested: true, lastStart: last }, now())).toBe(
      now(),
    );
    // 1 x 5m and 9 x 24h (12.4 an hour): the long ones keep theirs, the short one takes what they leave.
    const { b: b2 } = budgets(10);
    b2.declare('short', 'g', { intervalMs: 5 * MIN });
    for (let i = 0; i < 9; i++) b2.declare(`day${i}`, 'g', { intervalMs: 24 * HOUR });
    expect(b2.view('g', 'short').overcommit?.fairMinutes).toBe(7);
  });

  it('orders a turn not asked yet: a site whose interval ends first takes the slot before one due later', () => {
    const { b, now, advance } = budgets(1);
    b.take('g', 'x');
    // 'early' last started 2 h ago with a 1 h interval: due an hour ago, though it has not asked.
    b.declare('early', 'g', { intervalMs: HOUR, lastStart: now() - 2 * HOUR });
    b.declare('late', 'g', { intervalMs: HOUR, lastStart: now() - 30 * MIN });
    advance(45 * MIN);
    const lateSlot = b
      .view('g', 'late')
      .slotAt({ dueAt: now() - 15 * MIN, requested: false, lastStart: now() - 75 * MIN }, now());
    // The window frees at x's hour; that slot is early's, late gets the one after it.
    expect(lateSlot).toBe(now() + 15 * MIN + HOUR);
  });
});
