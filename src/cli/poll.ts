import { wait } from '../timers.ts';
import { CliError, EXIT } from './exit-codes.ts';

export interface PollOptions<T> {
  intervalMs: number;
  timeoutMs: number;
  /** What is being waited for, for the timeout message. */
  what: string;
  onUpdate?: (value: T, elapsedMs: number) => void;
}

/** Calls `read` every interval until `finished` says so; fails with exit 6 when the deadline passes. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  finished: (value: T) => boolean,
  options: PollOptions<T>,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    const elapsed = Date.now() - started;
    options.onUpdate?.(value, elapsed);
    if (finished(value)) return value;
    if (elapsed + options.intervalMs > options.timeoutMs) {
      throw new CliError(
        EXIT.unavailable,
        `${options.what} did not finish within ${Math.round(options.timeoutMs / 1000)} s (raise --timeout to wait longer).`,
      );
    }
    await wait(options.intervalMs);
  }
}
