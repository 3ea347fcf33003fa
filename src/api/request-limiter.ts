// The vendor also limits admin requests per key per minute (VENDOR-FACTS: about 100, 429 beyond).
// A sliding window like the server's: a request waits until fewer than `perMinute` were sent in the
// last minute, so one process never hits the limit by itself however many releases it reconciles.
import { SlidingWindow } from './sliding-window.ts';

/** A limiter of what arrives here (the trigger receiver's callers) counts a minute. */
const MINUTE_MS = 60_000;

/**
 * A limiter of what is sent to the platform counts a minute and a second: the platform counts
 * arrivals, which come after the sends by a latency that varies (a new connection's first request
 * is slower), so a request sent exactly a minute after the oldest could arrive within its minute.
 */
export const SENT_TO_PLATFORM_WINDOW_MS = 61_000;

/** The operator's default: below the platform's ~100, leaving room for the key's other users. */
export const DEFAULT_API_REQUESTS_PER_MINUTE = 90;

/**
 * Batch CLI commands' default (`mirror sync`): a share of the key's ~100 that leaves the operator,
 * which polls by the same sparse schedule and rarely nears its own ceiling, room for its work.
 */
export const DEFAULT_CLI_API_REQUESTS_PER_MINUTE = 30;

export class RequestLimiter {
  readonly perMinute: number;
  private readonly now: () => number;
  private readonly sent: SlidingWindow;

  constructor(perMinute: number, now: () => number = Date.now, windowMs = MINUTE_MS) {
    if (!Number.isInteger(perMinute) || perMinute < 1) {
      throw new Error(`requests per minute must be a positive integer, not ${perMinute}`);
    }
    this.perMinute = perMinute;
    this.now = now;
    this.sent = new SlidingWindow(windowMs, now);
  }

  /** Milliseconds until one more request may be sent (0: now). */
  delayMs(): number {
    return this.sent.delayMs(this.perMinute);
  }

  /** Requests that may be sent now without waiting. */
  remaining(): number {
    return this.perMinute - this.sent.count();
  }

  /** No request in the last minute: the limiter is as good as a new one (and can be dropped). */
  idle(): boolean {
    return this.sent.count() === 0;
  }

  /** Takes a slot if one is free; otherwise says how long to wait before asking again. */
  tryTake(): number {
    const delay = this.delayMs();
    if (delay === 0) this.sent.add(this.now(), undefined);
    return delay;
  }
}
