// A shortened clock for a CLI process (node --import this file): Date.now runs CLOCK_SPEED times
// faster and setTimeout/setInterval delays shrink by as much, so a command that waits minutes for
// per-minute request slots is done in seconds. The simulator it talks to gets the same speed with
// `fastClock(speed)` as its clock, so both count the same minutes.

const ENV = 'STATIC_EXPORT_TEST_CLOCK_SPEED';

/** NODE_OPTIONS and the speed for a CLI child process (runCli's env). */
export const fastClockEnv = (speed: number): Record<string, string> => ({
  NODE_OPTIONS: `--import ${import.meta.filename}`,
  [ENV]: String(speed),
});

/** An epoch-ms clock running `speed` times faster than the real one from now on. */
export function fastClock(speed: number, realNow: () => number = Date.now): () => number {
  const start = realNow();
  return () => start + (realNow() - start) * speed;
}

const speed = Number(process.env[ENV] ?? '');
if (speed > 1) {
  Date.now = fastClock(speed, Date.now.bind(Date));
  const { setTimeout: timeout, setInterval: interval } = globalThis;
  globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms = 0, ...args: unknown[]) =>
    timeout(() => fn(...args), ms / speed)) as typeof setTimeout;
  globalThis.setInterval = ((fn: (...a: unknown[]) => void, ms = 0, ...args: unknown[]) =>
    interval(() => fn(...args), ms / speed)) as typeof setInterval;
}
