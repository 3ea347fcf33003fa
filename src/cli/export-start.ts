// Starting an export in a pipeline. The current API revision runs one export per deployment at a
// time and answers 409 to a start meanwhile, without saying which job is active: the CLI cannot
// follow that job, so it starts again later, backing off, until the job has ended or --timeout.

import { ExportBusyError } from '../api/errors.ts';
import type { StartedExport } from '../api/schemas.ts';
import { formatDuration } from '../crd/duration.ts';
import { wait } from '../timers.ts';
import { CliError, EXIT } from './exit-codes.ts';

/** The first wait after a 409; each next one doubles, up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 3_000;
const MAX_RETRY_MS = 60_000;

interface StartOptions {
  /** How long the command may wait in all, from now. */
  timeoutMs: number;
  /** Names the site in messages. */
  what: string;
  /** Called before each wait after a 409, with how long it lasts. */
  onBusy: (delayMs: number, error: ExportBusyError) => void;
}

/** `start()`, again after each 409 until it succeeds or `timeoutMs` has passed (exit 6 then). */
export async function startWhenFree(
  start: () => Promise<StartedExport>,
  options: StartOptions,
): Promise<StartedExport> {
  const began = Date.now();
  for (let retry = 0; ; retry++) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof ExportBusyError)) throw error;
      const left = options.timeoutMs - (Date.now() - began);
      if (left <= 0) {
        throw new CliError(
          EXIT.unavailable,
          `${options.what} still had an export queued or running after waiting ${formatDuration(options.timeoutMs)} ` +
            '(409 on every start): raise --timeout to wait longer, or find out who keeps exporting it.',
        );
      }
      const delayMs = Math.min(FIRST_RETRY_MS * 2 ** retry, MAX_RETRY_MS, left);
      options.onBusy(delayMs, error);
      await wait(delayMs);
    }
  }
}
