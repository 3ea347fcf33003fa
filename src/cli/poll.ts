import { type ExportObservations, nextPollDelayMs, observe } from '../api/poll-schedule.ts';
import { wait } from '../timers.ts';
import { CliError, EXIT } from './exit-codes.ts';

interface PollOptions<T> {
  /** How long to wait before the next read, given the last value read (undefined before the first). */
  delayMs: (last: T | undefined) => number;
  timeoutMs: number;
  /** What is being waited for, for the timeout message. */
  what: string;
  onUpdate?: (value: T, elapsedMs: number) => void;
}

/**
 * Calls `read` as `delayMs` says until `finished` says so; fails with exit 6 once the deadline has
 * passed (the last read is at the deadline, however far apart the schedule puts the reads).
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  finished: (value: T) => boolean,
  options: PollOptions<T>,
): Promise<T> {
  const started = Date.now();
  let last: T | undefined;
  for (;;) {
    const left = options.timeoutMs - (Date.now() - started);
    await wait(Math.max(0, Math.min(options.delayMs(last), left)));
    const value = await read();
    last = value;
    const elapsed = Date.now() - started;
    options.onUpdate?.(value, elapsed);
    if (finished(value)) return value;
    if (elapsed >= options.timeoutMs) {
      throw new CliError(
        EXIT.unavailable,
        `${options.what} did not finish within ${Math.round(options.timeoutMs / 1000)} s (raise --timeout to wait longer).`,
      );
    }
  }
}

/** Reads at once, then every `intervalMs`. */
export const fixedDelay =
  (intervalMs: number) =>
  (last: unknown): number =>
    last === undefined ? 0 : intervalMs;

/**
 * The export's poll timing: the schedule the operator uses (src/api/poll-schedule.ts), fed with
 * each status read. The CLI keeps no history: it goes by progress, and by the duration the caller
 * expects (--expected-duration) as the operator goes by the site's previous exports.
 */
export function exportScheduleDelay(
  startedAt: number,
  expectedMs?: number,
  clock: () => number = Date.now,
): (last: { status: string; progress?: number | undefined } | undefined) => number {
  let seen: ExportObservations = {
    startedAt,
    ...(expectedMs === undefined ? {} : { previousDurationsMs: [expectedMs] }),
  };
  return (last) => {
    const now = clock();
    if (last) seen = observe(seen, { state: last.status, progress: last.progress }, now);
    return nextPollDelayMs(seen, now) ?? 0;
  };
}
