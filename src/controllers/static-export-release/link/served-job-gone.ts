// The served (or pinned) job's link answered 404: the pure fold of that outcome. A purged job does
// not come back, but a 404 can be passing, so the first is noted and confirmed a while later; then,
// unpinned, the release exports anew; pinned, only the user can choose another version. Reached
// from the link asked for by fresh-link.ts (a renewal, a repair or a pin).
import type { Failure } from '../../failures.ts';
import type { Step } from '../release-effect.ts';
import type { Folded, Snapshot, Status, Tunables } from '../release-model.ts';

/**
 * What a 404 for job `jobId`'s link makes of the release (`release` as meant). The served job's 404
 * is asked once more before it counts (a pin of another job from history is not served yet).
 */
export function foldJobMissing(snapshot: Snapshot, jobId: string, notFound: unknown, tun: Tunables): Step {
  const { release, now } = snapshot;
  const status = release.status ?? {};
  const served = status.current?.jobId === jobId;
  const confirmIn = served ? servedJobConfirmIn(status, now, tun) : 0;
  if (confirmIn === undefined)
    return { kind: 'commit', ...afterServedJobMissing(snapshot), requeueAfterMs: tun.jobGoneConfirmMs };
  if (confirmIn > 0) return { kind: 'wait', requeueAfterMs: confirmIn };
  const pinned = release.spec.pinnedVersion;
  if (pinned) return { kind: 'fail', status, failure: pinnedJobGone(status, pinned, jobId), cause: notFound };
  return { kind: 'commit', ...afterServedJobGone(snapshot), requeueAfterMs: 0 };
}

/**
 * The platform answered 404 for the served job's link. A purged job does not come back, but a 404
 * can be passing (a replica or store that does not have the job yet): the first one is noted, and
 * only a second one, asked a while later, makes the job gone (servedJobConfirmedGone).
 */
export function afterServedJobMissing({ release, now }: Snapshot): Folded {
  const base = release.status ?? {};
  return {
    status: { ...base, current: { ...base.current, jobMissingSince: now.toISOString() } },
    events: [],
  };
}

/** How long until a noted 404 of the served job may be confirmed; 0: confirmed now, undefined: none noted. */
export function servedJobConfirmIn(status: Status, now: Date, tun: Tunables): number | undefined {
  const since = status.current?.jobMissingSince;
  if (since === undefined) return undefined;
  return Math.max(0, Date.parse(since) + tun.jobGoneConfirmMs - now.getTime());
}

/**
 * The served version's job no longer exists on the platform (purged, a 404 confirmed), so its link
 * cannot be renewed: the job is forgotten and the release exports anew, ahead of the scheduled
 * starts of its start budget group (startReason JobVanished); the pods keep what they have
 * meanwhile, and the Warning says until when a new pod can still download it.
 */
export function afterServedJobGone({ release }: Snapshot): Folded {
  const base = release.status ?? {};
  const { jobId, revision: _, projectId: __, jobMissingSince: ___, ...current } = base.current ?? {};
  const expires = current.expiresAt
    ? ` The link written expires at ${current.expiresAt}: a pod started after that cannot download the site until the new export is published.`
    : '';
  return {
    status: { ...base, current },
    events: [
      {
        type: 'Warning',
        reason: 'ExportVanished',
        note: `Export job ${jobId} of the served version ${current.version} no longer exists on the platform, so its link cannot be renewed; exporting again, ahead of the scheduled starts.${expires}`,
      },
    ],
  };
}

/** A pinned version's job no longer exists: nothing can renew or fetch it again, and only the user can choose another. */
export function pinnedJobGone(status: Status, pinned: string, jobId: string): Failure {
  const expires = status.current?.version === pinned ? status.current.expiresAt : undefined;
  return {
    reason: 'PinnedJobGone',
    message: `Export job ${jobId} of pinned version ${pinned} no longer exists on the platform (purged), so its bundle link cannot be renewed or fetched again. The pods keep serving what they have${expires ? `, but a pod started after the link expires at ${expires} cannot download it` : ''}. Remove spec.pinnedVersion to export again, or pin a newer version from status.history`,
    stalled: true,
  };
}
