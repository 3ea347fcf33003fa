// The platform's current export API allows 10 starts per organization in any hour and answers 429
// beyond. Every release of an organization (a start budget group: its admin key, or
// spec.startBudget.group) counts its starts here, in one sliding window, and those that want to
// start take turns in one queue: a manual request first, then by due time. A group may have only a
// share of the organization's hour (spec.startBudget.startsPerHour, --start-budget-per-hour) when
// other clusters or pipelines spend the rest. When the group's intervals want more than its
// budget, the short ones are stretched to the group's fair interval (each site of the group gets an
// equal share, a long interval keeps its own; releases sharing one export are one site), so no site
// starves, a short interval does not take the others' share, and the platform never has to refuse.
// In memory, per process; the releases' status records what a restarted operator needs (their
// starts, refused ones too, and a 429's hold), and each release's recorded starts count in the
// group it is in now, whichever key recorded them.
import { HOUR_MS, SlidingWindow } from '../../../api/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../../project.ts';
import type { Reservation } from '../../reconciler-base.ts';

/** A 429 blocks the group at least this long (a Retry-After shorter than this, or none). */
const MIN_BLOCK_MS = 60_000;
/** A waiter that has not asked again for this long is gone (deleted, or no longer wants to start). */
const STALE_WAITER_MS = 2 * HOUR_MS;

/** What a release asks for: its place in the queue. */
export interface StartAsk {
  /** When its own reason made the start due (ms): its interval's end, a request, a spec change, its creation. */
  dueAt: number;
  /** A manual request (annotation, trigger): ahead of every other start. */
  requested: boolean;
  /** A scheduled start: its last start, from which an overcommitted group's fair interval counts. */
  lastStart?: number;
}

/** What the budget knows of a release of its group. */
export interface Member {
  /** spec.interval (undefined: only when triggered, or pinned). */
  intervalMs?: number;
  /** Its last start: when its interval ends it takes its turn, asked or not yet. */
  lastStart?: number;
  /** The export it shares with other releases (see shareKey): releases of one share key are one site's demand. */
  shareKey?: string;
  /** Its project: a 409 holds every release of the project, not only the one that met it. */
  project?: string;
  /** The starts its status records (status.recentStarts, refused ones too): counted in its group. */
  recorded?: readonly number[];
  /** spec.startBudget.startsPerHour: the group's share of the organization's hour (the least any member names). */
  startsPerHour?: number;
}

/** A release's group: its name, and whether it is its admin key's (no spec.startBudget.group). */
export interface GroupRef {
  name: string;
  byKey: boolean;
}

interface Waiter {
  ask: StartAsk;
  /** When it began to wait (the overdue metric compares it with the release's interval). */
  waitingSince: number;
  seenAt: number;
}

interface Group {
  /** Start times in the window, oldest first, each with the member that made it. */
  starts: SlidingWindow<string>;
  waiters: Map<string, Waiter>;
  /** The platform refused starts (429) until then. */
  blockedUntil: number;
  /** Per project: a 409 said a job of it is active; no release of the project asks again before then. */
  busyUntil: Map<string, number>;
  members: Map<string, Member>;
  /** The overcommit was told (an Event); told again only after the demand fitted once more. */
  announced: boolean;
  /** Named after an admin key (no spec.startBudget.group): a rotated key's group carries its count on. */
  byKey: boolean;
}

/** The group's intervals want more starts per hour than the budget allows. */
export interface Overcommit {
  sites: number;
  /** Starts per hour the declared intervals want. */
  wanted: number;
  /** The shortest interval, in minutes, that fits when every site of the group uses it. */
  fitsMinutes: number;
  /** Meanwhile every shorter interval is stretched to this one (minutes): an equal share each. */
  fairMinutes: number;
}

/** The group's budget as a decision reads it (pure: a snapshot of this moment). */
export interface BudgetView {
  group: string;
  /** The group's starts per hour: the organization's 10, or the share spec.startBudget.startsPerHour names. */
  limit: number;
  used: number;
  /** When this release may start, asked at `now` (the decision's clock): `now` or earlier means now. */
  slotAt(ask: StartAsk, now: number): number;
  /** The platform's 429 blocks the group until then (ms), if it does. */
  blockedUntil?: number;
  /** A 409 on a start of this release's project holds its releases until then (ms), if it does. */
  busyUntil?: number;
  overcommit?: Overcommit;
  /** The overcommit is not told yet: this decision tells it (an Event). */
  announce: boolean;
}

interface StartBudgetsOptions {
  /** Starts per hour of a group whose releases name no share of their own (--start-budget-per-hour). */
  limit?: number;
  windowMs?: number;
  now?: () => number;
  /** Wakes a waiting release (`namespace/name`) whose slot came earlier than it was told. */
  wake?: (member: string) => void;
}

/** A turn in the queue: the member, its ask, its due time with the fair interval applied. */
interface Turn {
  member: string;
  ask: StartAsk;
  due: number;
  intervalMs: number;
}

/**
 * The queue's order: a manual request first; then the earliest due; among those due together
 * (turns come in bursts as the window frees), the longest interval first (it asks least); then by
 * name.
 */
function before(a: Turn, b: Turn): boolean {
  if (a.ask.requested !== b.ask.requested) return a.ask.requested;
  if (a.due !== b.due) return a.due < b.due;
  return a.intervalMs !== b.intervalMs ? a.intervalMs > b.intervalMs : a.member < b.member;
}

/**
 * The interval every shorter one is stretched to so the group's demand fits `limit` starts per
 * window (water-filling: the longest intervals keep theirs); undefined when it fits as declared.
 */
function fairInterval(intervals: number[], limit: number, windowMs: number): number | undefined {
  const sorted = intervals.filter((i) => i > 0).sort((a, b) => a - b);
  const demand = (f: number) => sorted.reduce((sum, i) => sum + windowMs / Math.max(i, f), 0);
  if (demand(0) <= limit) return undefined;
  for (let k = 1; k <= sorted.length; k++) {
    // The k shortest are stretched to f; the others keep theirs.
    const kept = sorted.slice(k).reduce((sum, i) => sum + windowMs / i, 0);
    if (kept >= limit) continue;
    const f = (k * windowMs) / (limit - kept);
    if (f >= (sorted[k - 1] ?? 0) && f <= (sorted[k] ?? Number.POSITIVE_INFINITY)) return f;
  }
  return undefined;
}

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
      g = {
        starts: new SlidingWindow(this.windowMs, this.now),
        waiters: new Map(),
        blockedUntil: 0,
        busyUntil: new Map(),
        members: new Map(),
        announced: false,
        byKey: false,
      };
      this.groups.set(name, g);
    }
    for (const [m, w] of g.waiters) if (this.now() - w.seenAt > STALE_WAITER_MS) g.waiters.delete(m);
    return g;
  }

  /** A start made before this process knew of it (status.recentStarts); the same one twice counts once. */
  recordPast(groupName: string, member: string, at: number): void {
    this.record(this.group(groupName), member, at);
  }

  private record(g: Group, member: string, at: number): void {
    if (g.starts.recent().some((s) => s.item === member && s.at === at)) return;
    g.starts.add(at, member);
  }

  /**
   * The group was held (a 429) until then before this process knew of it (a release's status): no
   * start before it.
   */
  hold(groupName: string, until: number): void {
    const g = this.group(groupName);
    g.blockedUntil = Math.max(g.blockedUntil, until);
  }

  /**
   * The release belongs to this group, with its interval and last start (see Member); the starts it
   * recorded count here, whichever group they were made in. A release that moves from one key's
   * group to another's (its Secret's key rotated) brings that group's starts and 429 hold along:
   * the organization's hour is the same, only the key changed.
   */
  declare(member: string, groupName: string, m: Member, byKey = false): void {
    const previous = this.groupOf.get(member);
    const g = this.group(groupName);
    g.byKey = byKey;
    if (previous !== undefined && previous !== groupName) {
      const was = this.groups.get(previous);
      this.leave(member);
      if (was?.byKey && g.byKey) {
        for (const s of was.starts.recent()) this.record(g, s.item, s.at);
        g.blockedUntil = Math.max(g.blockedUntil, was.blockedUntil);
      }
    }
    this.groupOf.set(member, groupName);
    g.members.set(member, m);
    for (const at of m.recorded ?? []) this.record(g, member, at);
  }

  /** The group's starts per hour: the least share its members name, else the operator's. */
  private limitOf(g: Group): number {
    let limit = this.limit;
    for (const m of g.members.values())
      if (m.startsPerHour !== undefined) limit = Math.min(limit, m.startsPerHour);
    return limit;
  }

  /** Deleted, suspended, or no longer of the current API: out of its group's queue and demand. */
  leave(member: string): void {
    const name = this.groupOf.get(member);
    if (name === undefined) return;
    this.groupOf.delete(member);
    const g = this.group(name);
    g.members.delete(member);
    this.dequeue(g, member);
  }

  view(groupName: string, member: string): BudgetView {
    const g = this.group(groupName);
    const limit = this.limitOf(g);
    const overcommit = this.overcommitOf(g, limit);
    if (!overcommit) g.announced = false;
    const project = g.members.get(member)?.project;
    const busy = project === undefined ? undefined : g.busyUntil.get(project);
    return {
      group: groupName,
      limit,
      used: g.starts.count(),
      slotAt: (ask, now) =>
        this.slotAt(g, member, ask, now, overcommit ? overcommit.fairMinutes * 60_000 : 0, limit),
      ...(g.blockedUntil > this.now() ? { blockedUntil: g.blockedUntil } : {}),
      ...(busy !== undefined && busy > this.now() ? { busyUntil: busy } : {}),
      ...(overcommit ? { overcommit } : {}),
      announce: overcommit !== undefined && !g.announced,
    };
  }

  /** Its due time, a scheduled start's stretched to the fair interval. */
  private turn(g: Group, member: string, ask: StartAsk, fairMs: number): Turn {
    const due =
      ask.requested || ask.lastStart === undefined ? ask.dueAt : Math.max(ask.dueAt, ask.lastStart + fairMs);
    const intervalMs = g.members.get(member)?.intervalMs ?? Number.POSITIVE_INFINITY;
    return { member, ask, due, intervalMs };
  }

  /**
   * The time of this release's slot. The turns ahead of it (those waiting, and those whose interval
   * ends first though they have not asked yet: two due at once are ordered, not raced) start in
   * order, each at its due time or as soon as the window has room, then this one. Releases sharing
   * one export take one turn: those sharing this release's export join its start, and of another
   * share key only the first in line starts (the others join it).
   */
  private slotAt(
    g: Group,
    member: string,
    ask: StartAsk,
    now: number,
    fairMs: number,
    limit: number,
  ): number {
    const from = Math.max(now, g.blockedUntil);
    const own = g.waiters.get(member)?.ask;
    const mine = own
      ? { ...ask, dueAt: Math.min(own.dueAt, ask.dueAt), requested: own.requested || ask.requested }
      : ask;
    const me = this.turn(g, member, mine, fairMs);
    const site = (m: string) => g.members.get(m)?.shareKey ?? m;
    const mySite = site(member);
    const ahead = new Map<string, Turn>();
    const add = (t: Turn) => {
      const key = site(t.member);
      const first = ahead.get(key);
      if (key !== mySite && before(t, me) && (!first || before(t, first))) ahead.set(key, t);
    };
    for (const [m, w] of g.waiters) if (m !== member) add(this.turn(g, m, w.ask, fairMs));
    for (const [m, { intervalMs, lastStart }] of g.members) {
      if (m === member || g.waiters.has(m) || intervalMs === undefined || lastStart === undefined) continue;
      const next = this.turn(g, m, { dueAt: lastStart + intervalMs, requested: false, lastStart }, fairMs);
      if (next.due <= me.due) add(next);
    }
    const times = g.starts.recent().map((s) => s.at);
    for (const t of [...[...ahead.values()].sort((a, b) => (before(a, b) ? -1 : 1)), me]) {
      const leaves = times[times.length - limit];
      times.push(Math.max(from, t.due, leaves === undefined ? from : leaves + this.windowMs));
    }
    return times.at(-1) ?? from;
  }

  /** The release waits for its slot: its place in the queue (its first due time is kept). */
  wait(groupName: string, member: string, ask: StartAsk): void {
    const g = this.group(groupName);
    const own = g.waiters.get(member);
    g.waiters.set(member, {
      ask: own
        ? { ...ask, dueAt: Math.min(own.ask.dueAt, ask.dueAt), requested: own.ask.requested || ask.requested }
        : ask,
      waitingSince: own?.waitingSince ?? this.now(),
      seenAt: this.now(),
    });
  }

  /**
   * The release starts at `at` (the decision's clock, the time its status records): the slot is
   * reserved, spent once the start request goes out, else given back (the first in line is woken).
   */
  take(groupName: string, member: string, at = this.now()): Reservation {
    const g = this.group(groupName);
    g.waiters.delete(member);
    const entry = g.starts.add(at, member);
    let held = true;
    return {
      sent: () => {
        held = false;
      },
      release: () => {
        if (!held) return;
        held = false;
        if (entry) g.starts.remove(entry);
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
  announced(groupName: string): void {
    this.group(groupName).announced = true;
  }

  /**
   * The platform refused a start (429) though the group's own count had room: others (another
   * cluster, a pipeline, the dashboard) spend the organization's hour. No start before its
   * Retry-After (clamped to between a minute and the window) or, without one, before the oldest
   * start counted here leaves the window (the whole window when none is counted).
   */
  refused(groupName: string, retryAfterMs: number | undefined): number {
    const g = this.group(groupName);
    const now = this.now();
    const oldest = g.starts.recent()[0];
    const estimate = oldest ? oldest.at + this.windowMs - now : this.windowMs;
    const until = now + Math.min(this.windowMs, Math.max(MIN_BLOCK_MS, retryAfterMs ?? estimate));
    g.blockedUntil = Math.max(g.blockedUntil, until);
    return g.blockedUntil;
  }

  /**
   * The platform answered 409 for the project (a job of it is active): no release of the project
   * in this group asks again before `until` (each ask may count as a start).
   */
  busy(groupName: string, project: string, until: number): void {
    const g = this.group(groupName);
    for (const [p, t] of g.busyUntil) if (t <= this.now()) g.busyUntil.delete(p);
    g.busyUntil.set(project, Math.max(g.busyUntil.get(project) ?? 0, until));
  }

  /** The groups known, for the metrics. */
  names(): string[] {
    return [...this.groups.keys()];
  }

  /** Starts the window allows now (0 while a 429 blocks the group). */
  remaining(groupName: string): number {
    const g = this.group(groupName);
    return g.blockedUntil > this.now() ? 0 : Math.max(0, this.limitOf(g) - g.starts.count());
  }

  /** Releases waiting for a slot. */
  waiting(groupName: string): number {
    return this.group(groupName).waiters.size;
  }

  /** Releases that have waited longer than their own interval. */
  overdue(groupName: string): number {
    const g = this.group(groupName);
    let n = 0;
    for (const [m, w] of g.waiters) {
      const interval = g.members.get(m)?.intervalMs;
      if (interval !== undefined && this.now() - w.waitingSince > interval) n++;
    }
    return n;
  }

  /** The demand of the group's sites: one export per share key, at the shortest interval of its releases. */
  private overcommitOf(g: Group, limit: number): Overcommit | undefined {
    const perSite = new Map<string, number>();
    for (const [member, m] of g.members) {
      if (!m.intervalMs) continue;
      const site = m.shareKey ?? member;
      perSite.set(site, Math.min(perSite.get(site) ?? Number.POSITIVE_INFINITY, m.intervalMs));
    }
    const intervals = [...perSite.values()];
    const fair = fairInterval(intervals, limit, this.windowMs);
    if (fair === undefined) return undefined;
    const wanted = intervals.reduce((sum, i) => sum + this.windowMs / i, 0);
    return {
      sites: intervals.length,
      wanted: Math.round(wanted * 10) / 10,
      fitsMinutes: Math.ceil((intervals.length * this.windowMs) / limit / 60_000),
      fairMinutes: Math.ceil(fair / 60_000),
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
    let first: Turn | undefined;
    for (const [m, w] of g.waiters) {
      const t = this.turn(g, m, w.ask, 0);
      if (!first || before(t, first)) first = t;
    }
    if (first) this.wake(first.member);
  }
}
