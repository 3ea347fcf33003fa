// Whether the export a trigger asked for is done, judged from the release alone. The operator records
// the request annotation it handled in status.lastHandledRequestedAt when it starts (or joins) the
// export for it (Flux's lastHandledReconcileAt); that export then publishes or fails like any other.
import type { StaticExportRelease } from '../crd/static-export-release.ts';
import type { Condition } from '../runtime/conditions.ts';

type TriggerOutcome =
  | { done: false; waitingFor: string }
  | { done: true; ok: true; version: string }
  | { done: true; ok: false; reason: string; message: string };

/** Failures that do not keep a requested export from starting: they are judged once it ran. */
const NOT_BLOCKING = new Set(['RolloutStalled', 'PublishGateFailed', 'ExportFailed']);

/**
 * How long a release may stay Stalled after the request before that counts as the request failing:
 * the request wakes the operator, which may find the cause fixed (a Secret created since).
 */
export const STALLED_GRACE_MS = 15_000;

const condition = (r: StaticExportRelease, type: string): Condition | undefined =>
  r.status?.conditions?.find((c) => c.type === type);

/** Whether `handled` (the last request handled) is `requestedAt` or a later one. */
function covers(handled: string | undefined, requestedAt: string): boolean {
  if (handled === undefined) return false;
  if (handled === requestedAt) return true;
  const [h, r] = [Date.parse(handled), Date.parse(requestedAt)];
  return !Number.isNaN(h) && !Number.isNaN(r) && h >= r;
}

/** `sinceRequestMs`: time since the receiver accepted the request. */
export function triggerOutcome(
  release: StaticExportRelease,
  requestedAt: string,
  sinceRequestMs: number,
): TriggerOutcome {
  const s = release.status ?? {};
  const ready = condition(release, 'Ready');
  const stalled = condition(release, 'Stalled');
  if (release.spec.suspend)
    return {
      done: true,
      ok: false,
      reason: 'Suspended',
      message: 'spec.suspend is true: the release exports nothing until it is resumed',
    };
  if (!covers(s.lastHandledRequestedAt, requestedAt)) {
    if (stalled?.status === 'True' && !NOT_BLOCKING.has(stalled.reason) && sinceRequestMs >= STALLED_GRACE_MS)
      return { done: true, ok: false, reason: stalled.reason, message: stalled.message };
    return { done: false, waitingFor: 'the operator to start the export' };
  }
  const exporting = s.export?.jobId !== undefined && s.export.finishedAt === undefined;
  if (exporting || condition(release, 'Reconciling')?.status === 'True') {
    const progress = s.export?.progress === undefined ? '' : ` (${Math.round(s.export.progress)}%)`;
    return { done: false, waitingFor: exporting ? `the export${progress}` : 'the rollout' };
  }
  if (ready?.status === 'True' && s.current?.version)
    return { done: true, ok: true, version: s.current.version };
  if (ready?.status === 'False')
    return { done: true, ok: false, reason: ready.reason, message: ready.message };
  return { done: false, waitingFor: 'the operator to report' };
}
