// Folding the outcomes of an export's actions back into status (pure): its start (started, or
// refused with 409 or 429, or failed) and its publish (new content, pin, renewal, repair; the
// publish gate's refusal; a job gone). `served` and `gateRefused` serve after-oci.ts too.

import type { ExportRevisionName } from '../../../api/index.ts';
import { HISTORY_LIMIT, type StaticExportRelease } from '../../../crd/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../../project.ts';
import { clampDelay } from '../../decision-shape.ts';
import type { Failure } from '../../failures.ts';
import { withoutRecordedStart } from '../budget/start-budget.ts';
import {
  DEFAULT_TUNABLES,
  type EventNote,
  type Folded,
  type PublishMode,
  type Snapshot,
  type Status,
  type Tunables,
} from '../release-model.ts';
import { renewalTime, untilNextWork } from '../schedule.ts';
import { recordedJob, siteName, startedRevision } from './export-site.ts';
import { requestsOf } from './start-reason.ts';

type ExportRecord = NonNullable<Status['export']>;

/**
 * The export this release takes part in from now on, started or joined, recorded as its own for
 * its spec generation: any start mark or wait goes, and the requests it answers count as handled.
 */
export function withExport(
  release: StaticExportRelease,
  status: Status,
  exp: Pick<ExportRecord, 'jobId' | 'state' | 'startedAt'> &
    Pick<ExportRecord, 'progress' | 'joined' | 'projectId' | 'revision'>,
): Status {
  const { start: _, waiting: __, ...base } = status;
  const generation = release.metadata.generation;
  return {
    ...base,
    export: { ...exp, ...(generation === undefined ? {} : { generation }) },
    ...requestsOf(release),
  };
}

/**
 * Right after the export job started: record its id (and, in the current export API, its project)
 * first of all (crash safety); the mark goes.
 */
export function afterStart({ release, now }: Snapshot, jobId: string, state: string): Folded {
  const status = withExport(release, release.status ?? {}, {
    jobId,
    state,
    progress: 0,
    startedAt: now.toISOString(),
    ...startedRevision(release.spec),
  });
  // A start of the current export API is among status.recentStarts since its mark (see `start`).
  return {
    status,
    events: [
      {
        type: 'Normal',
        reason: 'ExportStarted',
        note: `Started export job ${jobId} for ${siteName(release.spec)}`,
      },
    ],
  };
}

/**
 * The platform answered 409 (a job of the deployment is active that no release here recorded):
 * nothing was started, so the mark goes; the release waits it out, then starts once more.
 */
export function afterStartBusy({ release, now }: Snapshot, waitMs: number): Folded {
  const { start: _, ...status } = release.status ?? {};
  const until = new Date(now.getTime() + waitMs).toISOString();
  const since = status.waiting?.reason === 'ExportBusy' ? status.waiting.since : now.toISOString();
  const message = `The platform is busy with an export job of ${siteName(release.spec)} that this release did not start (the dashboard, another cluster, or an earlier start whose answer was lost): one job per deployment may be active (409). Starting once more at ${until}, when this site's exports usually end`;
  return {
    status: { ...status, waiting: { reason: 'ExportBusy', since, until, message } },
    events: [{ type: 'Normal', reason: 'ExportBusy', note: message }],
  };
}

/**
 * The platform refused the start (429): nothing was started, so the mark goes; the group's budget
 * is blocked until `until` and the release waits for its slot.
 */
export function afterStartRefused({ release, now }: Snapshot, until: number): Folded {
  const { start: _, ...status } = release.status ?? {};
  const at = new Date(until).toISOString();
  const message = `The platform refused the export start: more than ${EXPORT_STARTS_PER_HOUR} starts per organization in the last hour (429). No release of the start budget group starts before ${at}`;
  const since = status.waiting?.reason === 'WaitingForStartBudget' ? status.waiting.since : now.toISOString();
  return {
    status: {
      ...status,
      waiting: { reason: 'WaitingForStartBudget', since, until: at, refusedUntil: at, message },
    },
    events: [{ type: 'Warning', reason: 'RateLimited', note: message }],
  };
}

/**
 * The start call failed: if it may have reached the platform the mark stays (the next reconcile
 * reports StartOutcomeUnknown and waits); if it certainly did not, the mark goes, and so does the
 * start recorded with it (nothing was sent: the budget must not count it).
 */
export function afterStartFailed(status: Status, mayHaveStarted: boolean): Status {
  if (mayHaveStarted) return status;
  const { start, ...rest } = status;
  if (start === undefined || !rest.recentStarts) return rest;
  return { ...rest, recentStarts: withoutRecordedStart(rest.recentStarts, start.since) };
}

interface PublishOutcome {
  mode: PublishMode;
  jobId: string;
  /** The job's revision of the export API, as recorded (absent: recorded by an older operator). */
  revision?: ExportRevisionName;
  /** The job's project (a job of the current export API). */
  projectId?: string;
  version: string;
  sizeBytes?: number;
  /** HTML pages of the fetched site (NewContent, Pin): the next publish gate's baseline. */
  pageCount?: number;
  expiresAt: Date;
  /** Whether the target was written (false: it already held these values). */
  wrote: boolean;
}

/**
 * New content that is what the target serves already, from a job whose link can still be renewed:
 * nothing to write. After the served job was purged the same content is written with the new
 * job's link, or the release would renew from no job and export again and again.
 */
export function servesAlready(status: Status, version: string): boolean {
  return status.current?.version === version && status.current.jobId !== undefined;
}

export function afterPublish({ release, now }: Snapshot, out: PublishOutcome): Folded {
  const found = release.status ?? {};
  // New content published (or found served already): the exports failing in a row are over.
  const { exportFailures: _, ...cleared } = found;
  const base = out.mode === 'NewContent' ? cleared : found;
  const finishedExport =
    out.mode === 'NewContent' && base.export
      ? { ...base.export, state: 'completed', finishedAt: now.toISOString() }
      : base.export;
  const unchanged = out.mode === 'NewContent' && servesAlready(base, out.version);
  const pageCount =
    out.pageCount ?? (out.mode === 'Renew' || out.mode === 'Repair' ? base.current?.pageCount : undefined);
  const counted = pageCount === undefined ? {} : { pageCount };
  if (unchanged) {
    // Served before page counts were recorded: this fills in the baseline.
    const s = {
      ...base,
      ...(base.current ? { current: { ...base.current, ...counted } } : {}),
      ...(finishedExport ? { export: finishedExport } : {}),
    };
    return {
      status: s,
      events: [
        {
          type: 'Normal',
          reason: 'Unchanged',
          note: `Export job ${out.jobId} has the content already served (${out.version})`,
        },
      ],
    };
  }
  // A renewal is recorded as such (it may roll the workloads).
  const renewedAt = out.mode === 'Renew' ? now.toISOString() : base.current?.renewedAt;
  const expiresAt = out.expiresAt.toISOString();
  const linkOnly = out.mode === 'Renew' || out.mode === 'Repair';
  const job = recordedJob(out);
  const s: Status = {
    ...base,
    ...served(
      base,
      now,
      out.wrote,
      {
        version: out.version,
        ...job,
        ...(out.sizeBytes === undefined ? {} : { sizeBytes: out.sizeBytes }),
        ...counted,
        expiresAt,
        renewalTime: renewalTime(out.expiresAt, now, release.spec.renewBefore).toISOString(),
        ...(renewedAt === undefined ? {} : { renewedAt }),
      },
      linkOnly ? undefined : { version: out.version, ...job, ...counted },
    ),
    ...(finishedExport ? { export: finishedExport } : {}),
  };
  const event: EventNote =
    out.mode === 'Renew'
      ? {
          type: 'Normal',
          reason: 'LinkRenewed',
          note: `Renewed the bundle link of ${out.version}; it expires at ${expiresAt}`,
        }
      : out.mode === 'Repair'
        ? {
            type: 'Warning',
            reason: 'TargetRepaired',
            note: `The target no longer held ${out.version}; wrote it again with a fresh link`,
          }
        : {
            type: 'Normal',
            reason: 'Published',
            note: `Published ${out.version} from export job ${out.jobId}${pageCount === undefined ? '' : ` (${pageCount} pages)`}`,
          };
  return { status: s, events: [event] };
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

type Current = NonNullable<Status['current']>;

/** The commit holding the version stays while the version does (a renewal keeps it). */
const gitRecord = ({ gitCommit, gitTarget }: Current) => ({
  ...(gitCommit === undefined ? {} : { gitCommit }),
  ...(gitTarget === undefined ? {} : { gitTarget }),
});
type HistoryEntry = NonNullable<Status['history']>[number];

/**
 * What is served now: `current` (first applied now if the target was written or nothing was,
 * the last rollout kept to compare), and `entry` first in history (a link renewed or repaired
 * adds none).
 */
export function served(
  base: Status,
  now: Date,
  wrote: boolean,
  current: Omit<Current, 'appliedAt' | 'rollout'>,
  entry?: Omit<HistoryEntry, 'appliedAt'>,
): Pick<Status, 'current' | 'history'> {
  const history = entry
    ? [
        { ...entry, appliedAt: now.toISOString() },
        ...(base.history ?? []).filter((h) => h.version !== entry.version),
      ].slice(0, HISTORY_LIMIT)
    : base.history;
  return {
    current: {
      ...current,
      appliedAt: wrote || !base.current?.appliedAt ? now.toISOString() : base.current.appliedAt,
      ...(base.current?.rollout ? { rollout: base.current.rollout } : {}),
      ...(base.current && base.current.version === current.version ? gitRecord(base.current) : {}),
    },
    ...(history ? { history } : {}),
  };
}

/**
 * A finished export whose content failed the publish gate: nothing is written, `current` keeps
 * serving, and the export counts as handled (no re-export until the next trigger or interval).
 */
export function afterPublishGateFailed(
  { release, now }: Snapshot,
  rejected: { jobId: string; version: string; message: string },
  tun: Tunables = DEFAULT_TUNABLES,
): Folded & { requeueAfterMs?: number } {
  const base = release.status ?? {};
  // One more export in a row without a publish: while nothing is served, the retry backs off.
  const s: Status = {
    ...base,
    export: {
      ...base.export,
      state: 'completed',
      finishedAt: now.toISOString(),
      publishGateFailure: rejected.message,
    },
    exportFailures: (base.exportFailures ?? 0) + 1,
  };
  return gateRefused(
    release,
    s,
    `Export job ${rejected.jobId} (${rejected.version})`,
    rejected.message,
    untilNextWork({ ...release, status: s }, now, tun),
  );
}

/**
 * Content the publish gate refused, `what` naming it (`release` as read): `s` records it; nothing is written, what is
 * served stays, and the next look is at `nextMs` (the next trigger, interval or tag check).
 */
export function gateRefused(
  release: StaticExportRelease,
  s: Status,
  what: string,
  message: string,
  nextMs: number | undefined,
): Folded & { requeueAfterMs?: number } {
  const served = release.status?.current?.version;
  return {
    status: s,
    events: [
      {
        type: 'Warning',
        reason: 'PublishGateFailed',
        note: `${what} was not published: ${message}; ${served ? `still serving ${served}` : 'nothing is served yet'}`,
      },
    ],
    ...(nextMs === undefined ? {} : { requeueAfterMs: clampDelay(nextMs) }),
  };
}
