// The one sliding-window count of the codebase: the platform counts starts (10 an hour), agent
// job creations (100 an hour) and requests (about 100 a minute) over the window before each one,
// and so do the operator, the CLI and the simulator: what is in the window, and when one more fits.

/** An hour in milliseconds: the window of the platform's start limit and agent job budget. */
export const HOUR_MS = 3_600_000;

/** Whether an event at `at` is within the window ending at `now` (one exactly a window old has left). */
export function inWindow(at: number, now: number, windowMs: number): boolean {
  return at > now - windowMs;
}

/**
 * Milliseconds until fewer than `limit` of `times` (epoch ms, oldest first) lie within the window
 * ending at `now` (0: one more fits now): the `limit`-th newest must leave it first.
 */
export function windowDelayMs(
  times: readonly number[],
  limit: number,
  now: number,
  windowMs: number,
): number {
  const recent = times.filter((at) => inWindow(at, now, windowMs));
  if (recent.length < limit) return 0;
  return Math.max(0, (recent[recent.length - limit] ?? now) + windowMs - now);
}

/** One event counted in a window, with what the counter keeps of it. */
export interface WindowEntry<T> {
  readonly at: number;
  readonly item: T;
}

/** Events of the last `windowMs` (older ones are dropped as time passes), oldest first. */
export class SlidingWindow<T = undefined> {
  readonly windowMs: number;
  private readonly now: () => number;
  private entries: WindowEntry<T>[] = [];

  constructor(windowMs: number, now: () => number = Date.now) {
    this.windowMs = windowMs;
    this.now = now;
  }

  /** The events within the window ending now, oldest first. */
  recent(): readonly WindowEntry<T>[] {
    const now = this.now();
    const oldest = this.entries[0];
    if (oldest && !inWindow(oldest.at, now, this.windowMs))
      this.entries = this.entries.filter((e) => inWindow(e.at, now, this.windowMs));
    return this.entries;
  }

  count(): number {
    return this.recent().length;
  }

  /** Counts an event at `at` (in its place by time); undefined when it is already out of the window. */
  add(at: number, item: T): WindowEntry<T> | undefined {
    if (!inWindow(at, this.now(), this.windowMs)) return undefined;
    const entry = { at, item };
    const recent = this.recent();
    const index = recent.findIndex((e) => e.at > at);
    this.entries =
      index < 0 ? [...recent, entry] : [...recent.slice(0, index), entry, ...recent.slice(index)];
    return entry;
  }

  /** Takes a counted event back (its request never went out). */
  remove(entry: WindowEntry<T>): void {
    this.entries = this.entries.filter((e) => e !== entry);
  }

  /** Milliseconds until fewer than `limit` events are in the window (0: one more fits now). */
  delayMs(limit: number): number {
    return windowDelayMs(
      this.recent().map((e) => e.at),
      limit,
      this.now(),
      this.windowMs,
    );
  }
}
