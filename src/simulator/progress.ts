// How the simulator's running exports report progress (a module of its own: the CLI lists the
// models for --export-progress without loading the simulator).

/**
 * Every model is queued for the first tenth of the duration and completes at its end. linear:
 * progress grows evenly to 99 %. stall: it reaches 90 % at two thirds of the duration and stays
 * there for the last third (a non-linear job). none: running without any progress field, as the
 * vendor may answer.
 */
export type ExportProgressModel = 'linear' | 'stall' | 'none';
export const EXPORT_PROGRESS_MODELS: readonly ExportProgressModel[] = ['linear', 'stall', 'none'];

/** Percent done `ms` into the running phase of `runningMs` (queued time excluded); below 100 until done. */
export function exportProgress(
  model: ExportProgressModel,
  ms: number,
  runningMs: number,
): number | undefined {
  const span = Math.max(1, runningMs);
  if (model === 'none') return undefined;
  if (model === 'linear') return Math.min(99, Math.floor((ms / span) * 100));
  // The whole duration is span / 0.9 (a tenth queued); 90 % is due at two thirds of it.
  const toNinety = Math.max(1, span - span / 0.9 / 3);
  return Math.min(90, Math.floor((ms / toNinety) * 90));
}
