// Timers that honour long delays. Node fires any timer longer than 2^31-1 ms (24.8 days) after
// 1 ms (TimeoutOverflowWarning), so a link renewal five weeks away would reconcile at once, again
// and again. Every timer of the operator goes through here: long delays wait in chunks.

/** The longest delay Node's timers accept. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  clear(): void;
}

/**
 * `setTimeout` for any delay: re-armed in chunks of at most MAX_TIMER_MS. `unref`: the timer does
 * not keep the process alive.
 */
export function setLongTimeout(fn: () => void, ms: number, options: { unref?: boolean } = {}): LongTimer {
  let left = Number.isFinite(ms) ? Math.max(0, ms) : MAX_TIMER_MS;
  let handle: NodeJS.Timeout;
  const arm = () => {
    const chunk = Math.min(left, MAX_TIMER_MS);
    left -= chunk;
    handle = setTimeout(left > 0 ? arm : fn, chunk);
    if (options.unref) handle.unref();
  };
  arm();
  return { clear: () => clearTimeout(handle) };
}

/** `setInterval` for any period: each run re-arms a long timeout. */
export function setLongInterval(fn: () => void, ms: number, options: { unref?: boolean } = {}): LongTimer {
  let current: LongTimer;
  const arm = () => {
    current = setLongTimeout(
      () => {
        arm();
        fn();
      },
      ms,
      options,
    );
  };
  arm();
  return { clear: () => current.clear() };
}

/** Waits `ms`, or less when a signal aborts; resolves true when the full time passed. */
export function wait(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<boolean> {
  const active = signals.filter((s): s is AbortSignal => s !== undefined);
  return new Promise((resolve) => {
    if (active.some((s) => s.aborted)) return resolve(false);
    const finish = (completed: boolean) => {
      timer.clear();
      for (const s of active) s.removeEventListener('abort', onAbort);
      resolve(completed);
    };
    const onAbort = () => finish(false);
    const timer = setLongTimeout(() => finish(true), ms);
    for (const s of active) s.addEventListener('abort', onAbort, { once: true });
  });
}

/** Waits `ms`; an abort rejects at once with the signal's reason, as an aborted request does. */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!(await wait(ms, signal))) throw signal?.reason;
}

/**
 * How a delay is spread so that many clients failing together do not retry together (AWS's
 * "Exponential Backoff And Jitter"): `full` anywhere in [0, d), `equal` in [d/2, d), a fraction f
 * in [d(1-f), d(1+f)).
 */
export type Jitter = 'full' | 'equal' | number;

interface BackoffPolicy {
  /** The first delay (attempt 0). */
  base: number;
  /** The cap of the doubling (before jitter); Infinity for none. */
  max: number;
  /** No jitter when absent. */
  jitter?: Jitter;
}

// 2^64 times any base of a millisecond or more is past every cap; the exponent stops there so a
// long run of failures never computes Infinity (or NaN for a base of 0).
const MAX_EXPONENT = 64;

/** The delay before retry `attempt` (0 for the first): `base * 2^attempt`, capped at `max`, jittered. */
export function backoff(attempt: number, { base, max, jitter }: BackoffPolicy): number {
  const delay = Math.min(base * 2 ** Math.min(Math.max(0, attempt), MAX_EXPONENT), max);
  if (jitter === undefined) return delay;
  if (jitter === 'full') return Math.random() * delay;
  if (jitter === 'equal') return delay / 2 + Math.random() * (delay / 2);
  return delay * (1 - jitter + Math.random() * 2 * jitter);
}

/** `AbortSignal.timeout` with the delay clamped to what Node's timers accept. */
export function timeoutSignal(ms: number): AbortSignal {
  return AbortSignal.timeout(Math.min(Math.max(0, ms), MAX_TIMER_MS));
}

/** A signal aborted at a deadline or by a parent signal; `dispose` when the work is over. */
export interface Deadline {
  signal: AbortSignal;
  /** Whether the deadline (not the parent) aborted it. */
  expired(): boolean;
  /** Clears the timer and the parent's listener: a finished call holds nothing until its deadline. */
  dispose(): void;
}

/**
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])` without what that keeps: the timeout's timer
 * and signal live until the deadline (half an hour for a download), and the combined signal stays
 * registered with a long-lived parent. Under thousands of calls those add up to megabytes.
 */
export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  let expired = false;
  const onParentAbort = () => controller.abort(parent?.reason);
  const timer = setLongTimeout(
    () => {
      expired = !controller.signal.aborted;
      controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    },
    ms,
    { unref: true },
  );
  const dispose = () => {
    timer.clear();
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) {
    dispose();
    controller.abort(parent.reason);
  } else parent?.addEventListener('abort', onParentAbort, { once: true });
  return { signal: controller.signal, expired: () => expired, dispose };
}
