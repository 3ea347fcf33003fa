// A work queue of string keys with client-go semantics (rate-limiting delaying workqueue):
// - `dirty` holds keys that need processing, `processing` keys a worker holds right now;
//   a key added while queued is queued once, a key added while processing is queued again
//   only after `done`, so no two workers ever hold the same key.
// - `addAfter` delays an add (the earliest pending time wins), `addRateLimited` delays by the
//   larger of a per-key exponential backoff and a global token bucket, `forget` resets a key's
//   backoff after a success. Delayed keys wait in a heap under one timer (client-go's waiting
//   queue): a timer per key cost about 450 bytes each, one per release waiting for its renewal.
import { backoff, type LongTimer, setLongTimeout } from '../timers.ts';

export interface WorkQueueOptions {
  /** First retry delay of a failing key; doubles per failure. Default 1 s. */
  baseDelayMs?: number;
  /** Cap of the per-key backoff. Default 5 min. */
  maxDelayMs?: number;
  /** Global rate of rate-limited adds (all keys together). Default 10 per second. */
  qps?: number;
  /** Token-bucket burst. Default 100. */
  burst?: number;
}

/** A token bucket that hands out reservations: the delay until the reserved token exists. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly qps: number;
  private readonly burst: number;

  constructor(qps: number, burst: number, now = Date.now()) {
    this.qps = qps;
    this.burst = burst;
    this.tokens = burst;
    this.last = now;
  }

  /** Takes one token (possibly going into debt) and returns how long to wait for it. */
  reserve(now = Date.now()): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }
}

interface Waiting {
  key: string;
  readyAt: number;
}

/** A binary min-heap by `readyAt`. */
class WaitingHeap {
  private readonly items: Waiting[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Waiting | undefined {
    return this.items[0];
  }

  push(item: Waiting): void {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if ((a[parent] as Waiting).readyAt <= item.readyAt) break;
      a[i] = a[parent] as Waiting;
      a[parent] = item;
      i = parent;
    }
  }

  pop(): Waiting | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    a[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < a.length && (a[l] as Waiting).readyAt < (a[min] as Waiting).readyAt) min = l;
      if (r < a.length && (a[r] as Waiting).readyAt < (a[min] as Waiting).readyAt) min = r;
      if (min === i) break;
      a[i] = a[min] as Waiting;
      a[min] = last;
      i = min;
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  /** Key -> when it is due; the heap may also hold superseded (later) times, skipped when due. */
  private readonly delayed = new Map<string, number>();
  private readonly waiting = new WaitingHeap();
  private timer: LongTimer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly failures = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly bucket: TokenBucket;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 1_000;
    this.maxDelayMs = options.maxDelayMs ?? 300_000;
    this.bucket = new TokenBucket(options.qps ?? 10, options.burst ?? 100);
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const readyAt = Date.now() + ms;
    const pending = this.delayed.get(key);
    if (pending !== undefined && pending <= readyAt) return;
    this.delayed.set(key, readyAt);
    this.waiting.push({ key, readyAt });
    if (readyAt < this.timerAt) this.arm(readyAt);
  }

  /** The one timer, for the earliest due key. */
  private arm(at: number): void {
    this.timer?.clear();
    this.timerAt = at;
    // A pending retry must not keep a finished process alive.
    this.timer = setLongTimeout(() => this.fire(), Math.max(0, at - Date.now()), { unref: true });
  }

  /** Adds every key that is due, then waits for the next. */
  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    for (let next = this.waiting.peek(); next; next = this.waiting.peek()) {
      if (next.readyAt > now) {
        this.arm(next.readyAt);
        return;
      }
      this.waiting.pop();
      if (this.delayed.get(next.key) !== next.readyAt) continue; // superseded by an earlier time
      this.delayed.delete(next.key);
      this.add(next.key);
    }
  }

  /** Re-adds a failed key after the larger of its backoff and the global rate limit. */
  addRateLimited(key: string): void {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const perKey = backoff(failures, { base: this.baseDelayMs, max: this.maxDelayMs });
    const delay = Math.max(perKey, this.bucket.reserve());
    this.addAfter(key, delay);
  }

  /** Resets a key's backoff (after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times a key has failed since it was last forgotten. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process; waits for one. `undefined` once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks a key as processed; re-queues it when it was added meanwhile. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
  }

  /** Keys ready to be processed (not counting delayed or in-progress ones). */
  len(): number {
    return this.queue.length;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops handing out keys; waiting `get` calls resolve to `undefined`, delayed adds are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    this.timer?.clear();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.delayed.clear();
    this.waiting.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private push(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take(key));
    else this.queue.push(key);
  }

  private take(key: string): string {
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }
}
