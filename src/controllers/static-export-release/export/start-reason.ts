// What asks a platform release for a new export: nothing exported yet, the served job purged, a
// spec change, a request annotation, or the interval (or a retry) coming due.
import {
  RECONCILE_REQUEST_ANNOTATION,
  REQUESTED_AT_ANNOTATION,
  type StaticExportRelease,
} from '../../../crd/index.ts';
import type { StartReason, Status, Tunables } from '../release-model.ts';
import { nextExportDue } from '../schedule.ts';

/** The spec generation the last export was started for (statuses from before it was recorded: observedGeneration). */
const exportedGeneration = (s: Status) => s.export?.generation ?? s.observedGeneration ?? 0;

/** The spec changed since the last export started, so another follows (a pinned release does not re-export). */
export function specExportPending(release: StaticExportRelease, s: Status): boolean {
  return (
    !release.spec.pinnedVersion &&
    Boolean(s.export?.jobId || s.current?.version) &&
    (release.metadata.generation ?? 0) !== exportedGeneration(s)
  );
}

/**
 * The export requests on the release (our annotation, and Flux's `reconcile.fluxcd.io/requestedAt`
 * that `flux`-style tools set), each as its `status.lastHandled…` field records it once handled.
 */
export function requestsOf(
  release: StaticExportRelease,
): Pick<Status, 'lastHandledRequestedAt' | 'lastHandledReconcileAt'> {
  const a = release.metadata.annotations ?? {};
  return {
    ...(a[REQUESTED_AT_ANNOTATION] === undefined
      ? {}
      : { lastHandledRequestedAt: a[REQUESTED_AT_ANNOTATION] }),
    ...(a[RECONCILE_REQUEST_ANNOTATION] === undefined
      ? {}
      : { lastHandledReconcileAt: a[RECONCILE_REQUEST_ANNOTATION] }),
  };
}

/** Some request annotation has a value not yet handled. */
function requestPending(release: StaticExportRelease, s: Status): boolean {
  const r = requestsOf(release);
  return (
    (r.lastHandledRequestedAt !== undefined && r.lastHandledRequestedAt !== s.lastHandledRequestedAt) ||
    (r.lastHandledReconcileAt !== undefined && r.lastHandledReconcileAt !== s.lastHandledReconcileAt)
  );
}

/**
 * A start that goes ahead of the scheduled ones in its start budget group's queue: one asked for
 * by hand, and the replacement of a purged served job (its link cannot be renewed, so new pods
 * fail once it expires: it cannot wait its turn like an interval).
 */
export const goesFirst = (reason: StartReason | undefined): boolean =>
  reason === 'Requested' || reason === 'JobVanished';

/** Why the release exports now, if it does (it reads the stored status, as the ladder found it). */
export function startReason(release: StaticExportRelease, now: Date, tun: Tunables): StartReason | undefined {
  const s = release.status ?? {};
  if (!s.export?.jobId && !s.current?.version) return 'Initial';
  // The served version's job was purged (its link could not be renewed): a new one serves.
  if (s.current?.version && !s.current.jobId && !release.spec.pinnedVersion) return 'JobVanished';
  if (specExportPending(release, s)) return 'SpecChanged';
  if (requestPending(release, s)) return 'Requested';
  const due = nextExportDue(release, tun);
  if (due !== undefined && now.getTime() >= due) return s.current?.version ? 'Interval' : 'Retry';
  return undefined;
}
