// The platform's current export API allows 10 starts per organization in any hour and answers 429
// beyond. Every release of an organization (a start budget group: its admin key, or
// spec.startBudget.group) counts its starts here, in one sliding window, and those that want to
// start wait in one queue ordered by due time: a manual request first, then whoever has waited
// longest, so no site starves and the platform never has to refuse. In memory, per process; a
// restarted operator seeds the windows from the starts the releases record in status.
import { EXPORT_STARTS_PER_HOUR } from '../../project.ts';

const HOUR_MS = 3_600_000;
/** A 429 without Retry-After blocks the group at least this long. */
const MIN_BLOCK_MS = 60_000;
/** A waiter that has not asked again for this long is gone (deleted, or no longer wants to start). */
const STALE_WAITER_MS = 2 * HOUR_MS;

/** What a release asks for: its place in the queue. */
export interface StartAsk {
  /** When its start came due (kept from its first ask while it waits). */
  dueAt: number;
  /** A manual request (annotation, trigger): ahead of every scheduled start. */
  requested: boolean;
}

interface Waiter extends StartAsk {
  member: string;
  seenAt: number;
}

interface Group {
  /** Start times in the window, oldest first. */
  starts: { member: string; at: number }[];
  waiters: Map<string, Waiter>;
  /** The platform refused starts (429) until then. */
  blockedUntil: number;
  /** Each member's spec.interval (undefined: only when triggered). */
  intervals: Map<string, number | undefined>;
  /** The overcommitted demand was told (an Event) for this many starts per hour. */
  announced?: number;
}

/** The group's intervals want more starts per hour than the budget allows. */
export interface Overcommit {
  sites: number;
  /** Starts per hour the declared intervals want. */
  wanted: number;
  /** The shortest interval, in minutes, that fits when every site of the group uses it. */
  fitsMinutes: number;
}

/** The group's budget as a decision reads it (pure: a snapshot of this moment). */
export interface BudgetView {
  group: string;
  limit: number;
  used: number;
  /** When this release may start: now or earlier means now. */
  slotAt(ask: StartAsk): number;
  /** The platform's 429 blocks the group until then (ms), if it does. */
  blockedUntil?: number;
  overcommit?: Overcommit;
  /** The overcommit is not told yet: this decision tells it (an Event). */
  announce: boolean;
}

interface StartBudgetsOptions {
  limit?: number;
  windowMs?: number;
  now?: () => number;
  /** Wakes a waiting release (`namespace/name`) whose slot came earlier than it was told. */
  wake?: (member: string) => void;
}

const before = (a: StartAsk & { member: string }, b: StartAsk & { member: string }) =>
  a.requested !== b.requested ? a.requested : a.dueAt !== b.dueAt ? a.dueAt < b.dueAt : a.member < b.member;

export class StartBudgets {
  readonly limit: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly groups = new Map<string, Group>();
  private readonly groupOf = new Map<string, string>();
  private wake: (member: string) => void;

  constructor(options: StartBudgetsOptions = {}) {
    this.limit = options.limit ?? EXPORT_STARTS_PER_HOUR;
    this.windowMs = options.windowMs ?? HOUR_MS;
    this.now = options.now ?? Date.now;
    this.wake = options.wake ?? (() => {});
  }

  /** Who is woken when a slot comes free early (the controller of this term of leadership). */
  onWake(wake: (member: string) => void): void {
    this.wake = wake;
  }

  private group(name: string): Group {
    let g = this.groups.get(name);
    if (!g) {
      g = { starts: [], waiters: new Map(), blockedUntil: 0, intervals: new Map() };
      this.groups.set(name, g);
    }
    const cutoff = this.now() - this.windowMs;
    while (g.starts.length > 0 && (g.starts[0]?.at ?? 0) <= cutoff) g.starts.shift();
    for (const [m, w] of g.waiters) if (this.now() - w.seenAt > STALE_WAITER_MS) g.waiters.delete(m);
    return g;
  }

  /** A start made before this process knew of it (status.recentStarts); the same one twice counts once. */
  recordPast(groupName: string, member: string, at: number): void {
    const g = this.group(groupName);
    if (at <= this.now() - this.windowMs || g.starts.some((s) => s.member === member && s.at === at)) return;
    g.starts.push({ member, at });
    g.starts.sort((a, b) => a.at - b.at);
  }

  /** The release belongs to this group with this interval (ms; undefined: only when triggered). */
  declare(member: string, groupName: string, intervalMs: number | undefined): void {
    const previous = this.groupOf.get(member);
    if (previous !== undefined && previous !== groupName) this.leave(member);
    this.groupOf.set(member, groupName);
    this.group(groupName).intervals.set(member, intervalMs);
  }

  /** Deleted, suspended, or no longer of the current API: out of its group's queue and demand. */
  leave(member: string): void {
    const name = this.groupOf.get(member);
    if (name === undefined) return;
    this.groupOf.delete(member);
    const g = this.group(name);
    g.intervals.delete(member);
    this.dequeue(g, member);
  }

  view(groupName: string, member: string): BudgetView {
    const g = this.group(groupName);
    const overcommit = this.overcommitOf(g);
    return {
      group: groupName,
      limit: this.limit,
      used: g.starts.length,
      slotAt: (ask) => this.slotAt(g, { ...ask, member }),
      ...(g.blockedUntil > this.now() ? { blockedUntil: g.blockedUntil } : {}),
      ...(overcommit ? { overcommit } : {}),
      announce: overcommit !== undefined && g.announced !== overcommit.wanted,
    };
  }

  /**
   * The time of this release's slot: those ahead of it in the queue start in turn, each as soon as
   * the window has room (a start leaves it a window after it was made, a start made while waiting
   * too), then this one.
   */
  private slotAt(g: Group, ask: StartAsk & { member: string }): number {
    const from = Math.max(this.now(), g.blockedUntil);
    const own = g.waiters.get(ask.member);
    const me = own
      ? { ...ask, dueAt: Math.min(own.dueAt, ask.dueAt), requested: own.requested || ask.requested }
      : ask;
    let ahead = 0;
    for (const w of g.waiters.values()) if (w.member !== ask.member && before(w, me)) ahead++;
    const times = g.starts.map((s) => s.at);
    for (let i = 0; i <= ahead; i++) {
      const leaves = times[times.length - this.limit];
      times.push(leaves === undefined ? from : Math.max(from, leaves + this.windowMs));
    }
    return times.at(-1) ?? from;
  }

  /** The release waits for its slot: its place in the queue (its first due time is kept). */
  wait(groupName: string, member: string, ask: StartAsk): void {
    const g = this.group(groupName);
    const own = g.waiters.get(member);
    g.waiters.set(member, {
      member,
      dueAt: own ? Math.min(own.dueAt, ask.dueAt) : ask.dueAt,
      requested: (own?.requested ?? false) || ask.requested,
      seenAt: this.now(),
    });
  }

  /** The release starts now: the start counts from this moment; `giveBack` undoes it. */
  take(groupName: string, member: string): { giveBack(): void } {
    const g = this.group(groupName);
    g.waiters.delete(member);
    const entry = { member, at: this.now() };
    g.starts.push(entry);
    return {
      giveBack: () => {
        const i = g.starts.indexOf(entry);
        if (i < 0) return;
        g.starts.splice(i, 1);
        this.wakeFirst(g);
      },
    };
  }

  /** The release no longer waits (it decided something else). */
  forget(groupName: string, member: string): void {
    const g = this.groups.get(groupName);
    if (g) this.dequeue(g, member);
  }

  /** The overcommit was told. */
  announced(groupName: string, wanted: number): void {
    this.group(groupName).announced = wanted;
  }

  /**
   * The platform refused a start (429): no start before its Retry-After or, without one, before
   * the oldest start counted here leaves the window (at least a minute; the whole window when
   * none is counted: other clients of the organization spent it).
   */
  refused(groupName: string, retryAfterMs: number | undefined): number {
    const g = this.group(groupName);
    const now = this.now();
    const estimate = g.starts[0] ? g.starts[0].at + this.windowMs - now : this.windowMs;
    const until = now + Math.max(MIN_BLOCK_MS, retryAfterMs ?? estimate);
    g.blockedUntil = Math.max(g.blockedUntil, until);
    return g.blockedUntil;
  }

  /** The groups known, for the metrics. */
  names(): string[] {
    return [...this.groups.keys()];
  }

  /** Starts the window allows now (0 while a 429 blocks the group). */
  remaining(groupName: string): number {
    const g = this.group(groupName);
    return g.blockedUntil > this.now() ? 0 : Math.max(0, this.limit - g.starts.length);
  }

  /** Releases waiting for a slot. */
  waiting(groupName: string): number {
    return this.group(groupName).waiters.size;
  }

  /** Releases that have waited longer than their own interval. */
  overdue(groupName: string): number {
    const g = this.group(groupName);
    let n = 0;
    for (const w of g.waiters.values()) {
      const interval = g.intervals.get(w.member);
      if (interval !== undefined && this.now() - w.dueAt > interval) n++;
    }
    return n;
  }

  private overcommitOf(g: Group): Overcommit | undefined {
    let wanted = 0;
    for (const interval of g.intervals.values())
      if (interval !== undefined && interval > 0) wanted += this.windowMs / interval;
    if (wanted <= this.limit) return undefined;
    const sites = g.intervals.size;
    return {
      sites,
      wanted: Math.round(wanted * 10) / 10,
      fitsMinutes: Math.ceil((sites * this.windowMs) / this.limit / 60_000),
    };
  }

  private dequeue(g: Group, member: string): void {
    const was = g.waiters.get(member);
    if (!was) return;
    g.waiters.delete(member);
    this.wakeFirst(g);
  }

  /** A slot may have come free earlier than the first in line was told: it looks again. */
  private wakeFirst(g: Group): void {
    let first: Waiter | undefined;
    for (const w of g.waiters.values()) if (!first || before(w, first)) first = w;
    if (first) this.wake(first.member);
  }
}

/**
 * One reconcile's part in its release's start budget group (a release of the current export API):
 * the decision reads its view; the claim step right after takes the start decided or queues the
 * wait; the start action gives a slot back when the platform started nothing.
 */
export class BudgetVisit {
  private readonly budgets: StartBudgets;
  private readonly member: string;
  readonly group: string;
  private slot: { giveBack(): void } | undefined;

  constructor(budgets: StartBudgets, member: string, group: string, intervalMs: number | undefined) {
    this.budgets = budgets;
    this.member = member;
    this.group = group;
    budgets.declare(member, group, intervalMs);
  }

  view(): BudgetView {
    return this.budgets.view(this.group, this.member);
  }

  /** The start decided counts from now. */
  take(): void {
    this.slot = this.budgets.take(this.group, this.member);
  }

  /** The release waits for its slot in the queue. */
  wait(ask: StartAsk): void {
    this.budgets.wait(this.group, this.member, ask);
  }

  /** It decided neither to start nor to wait for a slot. */
  forget(): void {
    this.budgets.forget(this.group, this.member);
  }

  announced(wanted: number): void {
    this.budgets.announced(this.group, wanted);
  }

  /** The platform started nothing (409, or a failure before sending): the slot is free again. */
  giveBack(): void {
    this.slot?.giveBack();
    this.slot = undefined;
  }

  /**
   * The platform refused the start (429): the group waits; when it may start again (ms). The
   * refused start stays counted: the platform may count it too (VENDOR-FACTS).
   */
  refused(retryAfterMs: number | undefined): number {
    this.slot = undefined;
    return this.budgets.refused(this.group, retryAfterMs);
  }
}

/** A release's group: the one spec.startBudget names, else its admin key's (by digest, never the key). */
export function budgetGroup(named: string | undefined, keyId: string): string {
  return named ?? `key-${keyId}`;
}
