// The shared hourly start budget of the current export API: one sliding window and one queue per
// group, a manual request ahead of scheduled starts, the longest waiting next, a slot whose request
// was never sent given back, a 429 blocking the group, starts recorded before a restart counted
// once; releases sharing an export as one site, a group's share of the hour, a rotated key's count
// carried on, a 409 holding its project.
import { describe, expect, it } from 'vitest';
import { StartBudgets } from '../../../../../src/controllers/static-export-release/budget/start-budget.ts';

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

  it('counts releases sharing one export as one site: 6 sites x 2 releases at 1h fit, and one takes no turn of the other', () => {
    const { b, now } = budgets(10);
    for (let i = 0; i < 6; i++)
      for (const stage of ['staging', 'production'])
        b.declare(`${stage}-${i}`, 'g', { intervalMs: HOUR, shareKey: `site-${i}` });
    expect(b.view('g', 'staging-0').overcommit).toBeUndefined();
    // Of 8 sites the limit is exceeded per site, not per release.
    for (let i = 6; i < 12; i++)
      b.declare(`production-${i}`, 'g', { intervalMs: HOUR, shareKey: `site-${i}` });
    expect(b.view('g', 'staging-0').overcommit).toMatchObject({ sites: 12, wanted: 12 });
    // The waiting release of the same export is no turn ahead: it joins this one's start.
    const { b: one } = budgets(1);
    one.declare('staging', 'g', { shareKey: 'site' });
    one.declare('production', 'g', { shareKey: 'site' });
    one.declare('other', 'g', { shareKey: 'elsewhere' });
    one.wait('g', 'production', scheduled(now() - 10 * MIN));
    expect(one.view('g', 'staging').slotAt(scheduled(now()), now())).toBe(now());
    // Another export due first goes first.
    one.wait('g', 'other', scheduled(now() - 5 * MIN));
    expect(one.view('g', 'staging').slotAt(scheduled(now()), now())).toBe(now() + HOUR);
    // Two waiting releases of another export take one turn, not two.
    const { b: two } = budgets(1);
    for (const m of ['a1', 'a2']) two.declare(m, 'g', { shareKey: 'a' });
    two.declare('me', 'g', { shareKey: 'b' });
    two.wait('g', 'a1', scheduled(now() - 10 * MIN));
    two.wait('g', 'a2', scheduled(now() - 9 * MIN));
    expect(two.view('g', 'me').slotAt(scheduled(now()), now())).toBe(now() + HOUR);
  });

  it("gives a group the share of the hour its releases name (the least), else the operator's", () => {
    const { b, now } = budgets(10);
    b.declare('a', 'g', {});
    expect(b.view('g', 'a').limit).toBe(10);
    b.declare('b', 'g', { startsPerHour: 4 });
    b.declare('c', 'g', { startsPerHour: 6 });
    expect(b.view('g', 'a').limit).toBe(4);
    for (const m of ['x1', 'x2', 'x3', 'x4']) b.take('g', m).sent();
    expect(b.remaining('g')).toBe(0);
    expect(b.view('g', 'a').slotAt(scheduled(now()), now())).toBe(now() + HOUR);
    const { b: share } = budgets(3);
    share.declare('a', 'g', {});
    expect(share.view('g', 'a').limit).toBe(3);
  });

  it('holds the group after an unpredicted 429 no longer than an hour, however long Retry-After says', () => {
    const { b, now } = budgets(10);
    expect(b.refused('g', 5 * HOUR)).toBe(now() + HOUR);
    expect(b.refused('h', 1_000)).toBe(now() + MIN);
  });

  it("carries a rotated key's count to the new key's group, with its 429 hold; a named group does not take it", () => {
    const { b, now } = budgets(3);
    for (const m of ['a', 'b']) b.declare(m, 'key-old', {}, true);
    b.take('key-old', 'a').sent();
    b.take('key-old', 'b').sent();
    const until = b.refused('key-old', 30 * MIN);
    // The Secret's key changed: the first release to look again is in the new key's group.
    b.declare('a', 'key-new', {}, true);
    expect(b.remaining('key-new')).toBe(0);
    expect(b.view('key-new', 'a').blockedUntil).toBe(until);
    b.declare('b', 'key-new', {}, true);
    expect(b.view('key-new', 'a').used).toBe(2);
    // A release's own recorded starts count wherever it is now (e.g. after a restart).
    b.declare('c', 'named', { recorded: [now() - 10 * MIN, now() - 2 * HOUR] });
    expect(b.view('named', 'c').used).toBe(1);
    b.declare('a', 'named', {});
    expect(b.view('named', 'c').used).toBe(1);
  });

  it("holds every release of a project after a 409, in the releases' group", () => {
    const { b, now } = budgets(10);
    b.declare('staging', 'g', { project: 'p' });
    b.declare('docs', 'g', { project: 'p' });
    b.declare('other', 'g', { project: 'q' });
    b.busy('g', 'p', now() + 20 * MIN);
    expect(b.view('g', 'docs').busyUntil).toBe(now() + 20 * MIN);
    expect(b.view('g', 'other').busyUntil).toBeUndefined();
  });
});
