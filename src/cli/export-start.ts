// Starting an export in a pipeline. The current API revision runs one export per deployment at a
// time and answers 409 to a start meanwhile, without saying which job is active: the CLI cannot
// follow that job, so it starts again later until the job has ended or --timeout. A start answered
// 409 is not free: the vendor does not say whether it counts toward the organization's 10 starts an
// hour, so the project assumes it does and probes a busy project a few times an hour at most.

import { type AdminApiError, ExportBusyError } from '../api/errors.ts';
import type { StartedExport } from '../api/schemas.ts';
import { HOUR_MS, windowDelayMs } from '../api/sliding-window.ts';
import { formatDuration } from '../crd/duration.ts';
import { EXPORT_STARTS_PER_HOUR } from '../project.ts';
import { wait } from '../timers.ts';
import { CliError, EXIT, exitCodeFor } from './exit-codes.ts';

/** Starts of one project answered 409 in any hour, at most (a refused start may count). */
export const BUSY_ANSWERS_PER_HOUR = 4;
/** The wait after the first 409; each next one is FACTOR times longer (1, 4, 16 minutes). */
const FIRST_RETRY_MS = 60_000;
const FACTOR = 4;

interface StartOptions {
  /** How long the command may wait in all, from now. */
  timeoutMs: number;
  /** Names the site in messages. */
  what: string;
  /** Called before each wait after a 409, with how long it lasts. */
  onBusy: (delayMs: number, error: ExportBusyError) => void;
  /** When earlier runs met 409 on this project (the starts record), epoch ms: they count toward the hour's probes. */
  earlierBusy?: number[];
}

/**
 * When the next start may follow the 409s at `busy` (epoch ms, oldest first): after a growing
 * wait, and never a (BUSY_ANSWERS_PER_HOUR + 1)-th within an hour.
 */
export function nextProbeAt(busy: number[], retry: number, now: number): number {
  const spaced = now + FIRST_RETRY_MS * FACTOR ** retry;
  return Math.max(spaced, now + windowDelayMs(busy, BUSY_ANSWERS_PER_HOUR, now, HOUR_MS));
}

/** `start()`, again after each 409 while the hour's probes and `timeoutMs` allow (exit 6 then). */
export async function startWhenFree(
  start: () => Promise<StartedExport>,
  options: StartOptions,
): Promise<StartedExport> {
  const began = Date.now();
  const busy = [...(options.earlierBusy ?? [])];
  for (let retry = 0; ; retry++) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof ExportBusyError)) throw error;
      const now = Date.now();
      busy.push(now);
      const next = nextProbeAt(busy, retry, now);
      if (next > began + options.timeoutMs) {
        const mine = busy.length - (options.earlierBusy?.length ?? 0);
        throw new CliError(
          EXIT.unavailable,
          `${options.what} still had an export queued or running after ${formatDuration(Math.max(1, Math.round((now - began) / 1000)) * 1000)} ` +
            `(409 on ${mine} start(s)); the next start would be at ${new Date(next).toISOString()}, after --timeout ` +
            `${formatDuration(options.timeoutMs)}. A start answered 409 may count toward the organization's ${EXPORT_STARTS_PER_HOUR} starts an ` +
            `hour, so a busy project is tried ${BUSY_ANSWERS_PER_HOUR} times an hour at most: run again later, raise ` +
            '--timeout, or find out who keeps exporting it.',
        );
      }
      options.onBusy(next - now, error);
      await wait(next - now);
    }
  }
}

/** What a start answered in a way that may have created the job was answered with. */
function answerOf(error: AdminApiError): string {
  if (error.kind === 'InvalidResponse') return `in a form the client cannot use (HTTP ${error.status})`;
  if (error.status !== undefined) return `HTTP ${error.status}`;
  return error.kind === 'Timeout' ? 'no answer in time' : 'a connection lost';
}

/**
 * A start whose answer may follow the job's creation (startMayHaveCreatedJob): says so plainly,
 * with the answer's own exit code. Starting again would spend another of the hour's starts and
 * meet 409 while that job runs.
 */
export function startMayHaveCreated(what: string, error: AdminApiError): CliError {
  return new CliError(
    exitCodeFor(error),
    `the export start of ${what} was answered ${answerOf(error)} after the request reached the platform: the ` +
      'export job may exist and run. It is not started again in this run: a second start would spend another of ' +
      `the organization's ${EXPORT_STARTS_PER_HOUR} starts an hour, and meets 409 while that job runs. To look: the deployment's page ` +
      'on the dashboard lists its exports; a start answered 409 in a few minutes means the job still runs.',
  );
}
