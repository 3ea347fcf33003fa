// Graceful shutdown: on SIGTERM/SIGINT run the steps in order (stop informers, drain the queues,
// release the lease, close the health server) within one overall deadline; a second signal or
// the deadline exits at once, because a pod past its grace period is SIGKILLed anyway.
import type { Logger } from '../log.ts';
import { type LongTimer, setLongTimeout } from '../timers.ts';

interface ShutdownStep {
  name: string;
  run: () => Promise<unknown> | unknown;
}

/** Runs the steps in order, each cut off by the remaining deadline; true when all finished in time. */
export async function runShutdown(
  steps: ShutdownStep[],
  deadlineMs: number,
  logger?: Logger,
): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  let clean = true;
  for (const step of steps) {
    const left = end - Date.now();
    let timer: LongTimer | undefined;
    const outcome = await Promise.race([
      Promise.resolve()
        .then(step.run)
        .then(
          () => 'done' as const,
          (err: unknown) => {
            logger?.warn({ err, step: step.name }, 'shutdown step failed');
            return 'failed' as const;
          },
        ),
      new Promise<'timeout'>((resolve) => {
        timer = setLongTimeout(() => resolve('timeout'), left);
      }),
    ]);
    timer?.clear();
    if (outcome !== 'done') clean = false;
    if (outcome === 'timeout') {
      logger?.warn({ step: step.name, deadlineMs }, 'shutdown deadline reached');
      return false;
    }
  }
  return clean;
}
