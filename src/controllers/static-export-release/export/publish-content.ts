// Publishing a finished export's content (new content, or a pinned version's): the effect of
// exportInFlight and pinnedVersion's publish, and the pure fold of its outcome. The bundle is
// downloaded and verified once per job, new content judged by the publish gate, then written; what
// is served is recorded (`served`, `afterPublish`; a renewal or repair in link/fresh-link.ts and a
// registry's image in registry/pull-image.ts are recorded the same way).

import type { ExportRevisionName } from '../../../api/index.ts';
import { recordedJobRef } from '../../../api/index.ts';
import { assertVersion, bundleSource, type GateVerdict, linkDestinationsFor } from '../../../bundle/index.ts';
import { HISTORY_LIMIT, type StaticExportRelease } from '../../../crd/index.ts';
import { clampDelay } from '../../decision-shape.ts';
import type { ReconcileResult } from '../../types.ts';
import { askLink, foldLink } from '../link/job-link.ts';
import { meant, type Of, type ReleaseRun, type Step, settle } from '../release-effect.ts';
import {
  DEFAULT_TUNABLES,
  type EventNote,
  type Folded,
  type PublishMode,
  type Snapshot,
  type Status,
  type Tunables,
} from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import { renewalTime, untilNextWork } from '../schedule.ts';
import { targetOf } from '../sources/serving.ts';
import type { PlatformLook } from '../sources/source.ts';
import { recordedJob } from './export-site.ts';
import { judgeNewContent } from './publish-gate.ts';

/** Downloads, verifies and (new content) judges the job's bundle, then writes it to the target. */
export async function publishContent(
  options: ReleaseReconcilerOptions,
  tun: Tunables,
  look: PlatformLook,
  action: Of<'publish'>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o } = look;
  const { client } = o;
  const { signal } = run;
  const status = run.status;
  const snapshot = { now: o.now, release: meant(o.release, run) };
  const got = foldLink(snapshot, action.jobId, await askLink(look, action, run), tun);
  if ('step' in got) return settle(run, got.step);
  const { bundle } = got;
  // The link leads to a public address or the admin API's own host, unless opted out.
  const destinations = linkDestinationsFor(client.baseUrl, options.download?.allowPrivateLinks === true);
  // Downloaded and verified once per job, whichever release asks first; the others read the result.
  const fetched = await options.cache.fetch(bundleSource(client.identity, action.jobId), {
    url: bundle.bundleUrl,
    ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
    renewUrl: async () => (await client.exportLink(recordedJobRef(action), { signal })).bundleUrl,
    ...(signal ? { signal } : {}),
    ...(options.download?.deadlineMs ? { deadlineMs: options.download.deadlineMs } : {}),
    destinations,
  });
  assertVersion(fetched.version, action.expectVersion);
  const { version } = fetched;
  // Only new content is judged: a pinned version was served before.
  const verdict: GateVerdict =
    action.mode === 'NewContent' ? judgeNewContent(snapshot.release, version, fetched.site) : { ok: true };
  const exportFinished = () => {
    if (!status.export?.startedAt) return;
    options.metrics?.exportFinished(
      (o.now.getTime() - Date.parse(status.export.startedAt)) / 1000,
      'completed',
    );
  };
  if (!verdict.ok) {
    const refused = { kind: 'gateRefused', jobId: action.jobId, version, message: verdict.message } as const;
    const result = await settle(run, foldContent(snapshot, refused, tun));
    exportFinished();
    return result;
  }
  const unchanged = action.mode === 'NewContent' && servesAlready(status, version);
  const wrote = unchanged
    ? false
    : await targetOf(options, snapshot.release).write(
        { bundleUrl: bundle.bundleUrl, version },
        o.now,
        signal,
      );
  const result = await settle(
    run,
    foldContent(snapshot, {
      kind: 'published',
      mode: action.mode,
      ...recordedJob(action),
      version,
      expiresAt: bundle.expiresAt,
      wrote,
      ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
      pageCount: fetched.site.pages,
    }),
  );
  if (action.mode === 'NewContent') exportFinished();
  return result;
}

/** What a publish came to: its content (or link) written or found served already, or refused by the gate. */
export type ContentOutcome =
  | ({ kind: 'published' } & PublishOutcome)
  | { kind: 'gateRefused'; jobId: string; version: string; message: string };

/**
 * What a publish makes of the release (`release` as meant). Published: recorded as served, and the
 * workloads are looked at next, at once (a new version or renewal rolls them, and a spec change such
 * as a new workloadRef that re-exported identical content still brings them along; that reconcile
 * also schedules the renewal). Refused by the gate: nothing written, looked at again at the next
 * trigger or interval.
 */
export function foldContent(
  snapshot: Snapshot,
  outcome: ContentOutcome,
  tun: Tunables = DEFAULT_TUNABLES,
): Step {
  if (outcome.kind === 'gateRefused') {
    const { kind: _, ...rejected } = outcome;
    const { requeueAfterMs, ...next } = afterPublishGateFailed(snapshot, rejected, tun);
    return { kind: 'commit', ...next, ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) };
  }
  const { kind: _, ...out } = outcome;
  return { kind: 'commit', ...afterPublish(snapshot, out), requeueAfterMs: 0 };
}

export interface PublishOutcome {
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
