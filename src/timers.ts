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

/** `AbortSignal.timeout` with the delay clamped to what Node's timers accept. */
export function timeoutSignal(ms: number): AbortSignal {
  return AbortSignal.timeout(Math.min(Math.max(0, ms), MAX_TIMER_MS));
}
