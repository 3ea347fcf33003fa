import type { StaticExportRelease } from '../../../crd/index.ts';
import { withExport } from '../after-start.ts';
import { awaiting, none } from '../decision.ts';
import { siteName, startedProject } from '../export-site.ts';
import { type Decision, type PlatformCase, type Rule, rule, type Status } from '../model.ts';
import { JOIN_WAIT_MS } from '../schedule.ts';
import type { SharedExport } from '../shared-exports.ts';
import { startReason } from '../start-reason.ts';
import { startOrWait } from './start-or-wait.ts';

/**
 * Whether the group's export in flight is one this release should take part in: not its own job
 * already, and either newer than its last export (another release's trigger or interval exports
 * the site for all) or wanted now anyway (`wants`: this release has its own reason to export).
 */
function joinable(status: Status, shared: SharedExport | undefined, wants: boolean): boolean {
  if (!shared || (shared.jobId !== undefined && shared.jobId === status.export?.jobId)) return false;
  const last = status.export?.startedAt;
  return wants || last === undefined || Date.parse(shared.startedAt) > Date.parse(last);
}

/** Joining the group's export: its job id is recorded as this release's own, nothing is sent. */
function joined(
  release: StaticExportRelease,
  status: Status,
  shared: SharedExport & { jobId: string },
): Decision {
  const s = withExport(release, status, {
    jobId: shared.jobId,
    state: shared.state ?? 'queued',
    startedAt: shared.startedAt,
    joined: true,
    ...startedProject(release.spec),
  });
  // The job is polled at once (a member's poll answers it if fresh).
  return none(s, 0, [
    {
      type: 'Normal',
      reason: 'ExportJoined',
      note: `Joined export job ${shared.jobId} for ${siteName(release.spec)}, started for a release with the same key and export options; no second export is started`,
    },
  ]);
}

/**
 * An unpinned release joins its group's export in flight when it should take part in it, and
 * starts its own when it has a reason to export (and no other release of the site may have one).
 */
export const joinOrStart: Rule<PlatformCase> = rule('joinOrStart', ({ o, status, tun }) => {
  const { release, now, shared } = o;
  if (release.spec.pinnedVersion) return undefined;
  const reason = startReason(release, now, tun);
  if (shared && joinable(status, shared, reason !== undefined)) {
    const { jobId } = shared;
    if (jobId !== undefined) return joined(release, status, { ...shared, jobId });
    // Another release of the group is starting it: join once it has an id, never start a second.
    return awaiting(status, JOIN_WAIT_MS);
  }
  if (!reason) return undefined;
  // Looked at again once every release is known: it may join the job one of them records.
  if (o.peersUnknown) return awaiting(status, JOIN_WAIT_MS);
  return startOrWait({ o, status, tun }, reason);
});
