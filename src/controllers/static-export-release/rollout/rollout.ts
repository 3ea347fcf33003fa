// When the workloads serving a release roll, and how far their rollout has come: pure functions of
// the release's status, the workloads observed and the clock.
import {
  parseDuration,
  type StaticExportRelease,
  type StaticExportReleaseStatus,
} from '../../../crd/index.ts';
import { VERSION_ANNOTATION } from '../../../targets/values-secret.ts';
import { RENEWED_AT_ANNOTATION, type Workload, type WorkloadRef } from '../../../targets/workloads.ts';
import type { EventNote } from '../../types.ts';

type Current = NonNullable<StaticExportReleaseStatus['current']>;
export type RolloutRecord = NonNullable<Current['rollout']>;
/** NewVersion: new content or a pin; LinkRenewed: onLinkRenewal Rollout; Drift: a workload lacked them. */
type RollReason = 'NewVersion' | 'LinkRenewed' | 'Drift';

export interface Roll {
  kind: 'roll';
  reason: RollReason;
  workloads: WorkloadRef[];
  annotations: Record<string, string>;
}

/** The rollout in progress, judged: its record as it should be stored now. */
export interface RolloutWatch {
  kind: 'watch';
  rollout: RolloutRecord;
  events: EventNote[];
  /** Look again after this long; undefined once it completed. */
  requeueAfterMs?: number;
}

/** While stalled the rollout is still watched (it may complete once the workload is fixed), slowly. */
const STALLED_POLL_MS = 30_000;

/**
 * The pod template annotations the serving workloads carry: the served version, and the link
 * renewal they rolled for (with onLinkRenewal None, the one already rolled out stays as it is).
 */
export function desiredAnnotations(release: StaticExportRelease): Record<string, string> | undefined {
  const c = release.status?.current;
  if (!c?.version) return undefined;
  const renewedAt = release.spec.rollout.onLinkRenewal === 'Rollout' ? c.renewedAt : c.rollout?.renewedAt;
  return { [VERSION_ANNOTATION]: c.version, ...(renewedAt ? { [RENEWED_AT_ANNOTATION]: renewedAt } : {}) };
}

const carries = (w: Workload, desired: Record<string, string>) =>
  w.annotations[VERSION_ANNOTATION] === desired[VERSION_ANNOTATION] &&
  w.annotations[RENEWED_AT_ANNOTATION] === desired[RENEWED_AT_ANNOTATION];

/** Polls often while a rollout is young (small sites roll in seconds), less as it ages. */
function rolloutPollMs(startedAt: string, now: Date): number {
  const elapsed = now.getTime() - Date.parse(startedAt);
  if (elapsed < 30_000) return 1_000;
  if (elapsed < 5 * 60_000) return 5_000;
  return 15_000;
}

/** `Kind/name`, as kubectl names a workload. */
export const named = (w: { kind: string; name: string }) => `${w.kind}/${w.name}`;

/**
 * What the workloads need: a roll (some do not carry the desired annotations), the judgement of
 * the rollout under way, or nothing (`undefined`: nothing served, no workloads, or rolled out).
 */
export function rolloutStep(
  release: StaticExportRelease,
  workloads: readonly Workload[] | undefined,
  now: Date,
): Roll | RolloutWatch | undefined {
  const desired = desiredAnnotations(release);
  if (!desired || !workloads) return undefined;
  const stale = workloads.filter((w) => !carries(w, desired));
  const rec = release.status?.current?.rollout;
  if (stale.length) {
    const reason: RollReason =
      rec?.version !== desired[VERSION_ANNOTATION]
        ? 'NewVersion'
        : rec?.renewedAt !== desired[RENEWED_AT_ANNOTATION]
          ? 'LinkRenewed'
          : 'Drift';
    return {
      kind: 'roll',
      reason,
      workloads: stale.map((w) => ({ kind: w.kind, name: w.name })),
      annotations: desired,
    };
  }
  if (!rec || rec.completedAt) return undefined;

  const pending = rec.workloads
    .map((r) => ({ ref: r, w: workloads.find((w) => w.kind === r.kind && w.name === r.name) }))
    // A workload deleted since it was rolled has nothing left to wait for.
    .filter((p): p is { ref: (typeof rec.workloads)[number]; w: Workload } => p.w !== undefined)
    .filter((p) => p.w.progress.state !== 'done');
  const failed = pending.find((p) => p.w.progress.state === 'failed');
  return judge(
    release,
    rec,
    now,
    pending.length
      ? {
          ...(failed ? { failed: `${named(failed.w)}: ${progressText(failed.w)}` } : {}),
          waiting: `${pending.map((p) => `${named(p.w)} (${progressText(p.w)})`).join(', ')} not rolled out`,
        }
      : undefined,
    {
      type: 'Normal',
      reason: 'RolledOut',
      note: `Rolled out ${rec.version} to ${rec.workloads.map(named).join(', ')}`,
    },
  );
}

/** What a rollout or sync under way still waits for: why it cannot go on, and what it waits for. */
interface Left {
  failed?: string;
  /** Completed by "within spec.rollout.timeout …" once that passed. */
  waiting: string;
}

/**
 * A rollout or sync under way judged: complete (`done` recorded) when nothing is `left`; stalled by a
 * failure or once spec.rollout.timeout passed (one Warning the first time); else looked at again.
 */
export function judge(
  release: StaticExportRelease,
  rec: RolloutRecord,
  now: Date,
  left: Left | undefined,
  done: EventNote,
): RolloutWatch {
  if (!left) {
    const { stalled: _, ...rest } = rec;
    return { kind: 'watch', rollout: { ...rest, completedAt: now.toISOString() }, events: [done] };
  }
  const timeoutMs = parseDuration(release.spec.rollout.timeout) ?? 10 * 60_000;
  const deadline = Date.parse(rec.startedAt) + timeoutMs;
  const stalled =
    left.failed ??
    (now.getTime() >= deadline
      ? `${left.waiting} within spec.rollout.timeout ${release.spec.rollout.timeout}`
      : undefined);
  if (stalled === undefined) {
    return {
      kind: 'watch',
      rollout: rec,
      events: [],
      requeueAfterMs: Math.min(rolloutPollMs(rec.startedAt, now), Math.max(1_000, deadline - now.getTime())),
    };
  }
  const what = rec.via === 'Sync' ? 'Sync' : 'Rollout';
  return {
    kind: 'watch',
    rollout: { ...rec, stalled },
    events: rec.stalled
      ? []
      : [
          {
            type: 'Warning',
            reason: 'RolloutStalled',
            note: `${what} of ${rec.version} stalled: ${stalled}`,
          },
        ],
    requeueAfterMs: STALLED_POLL_MS,
  };
}

function progressText(w: Workload): string {
  return w.progress.state === 'done' ? 'rolled out' : w.progress.message;
}

/** Right after the roll: what was rolled, with the generations it produced. */
export function afterRoll(
  release: StaticExportRelease,
  roll: Roll,
  rolled: readonly (WorkloadRef & { generation: number })[],
  now: Date,
): { current: Current; events: EventNote[] } {
  const current = release.status?.current ?? {};
  const version = roll.annotations[VERSION_ANNOTATION] ?? '';
  const renewedAt = roll.annotations[RENEWED_AT_ANNOTATION];
  const prev = current.rollout;
  // Joining a rollout of the same annotations (a workload found later): it is watched along.
  const same = prev && prev.version === version && prev.renewedAt === renewedAt;
  const others = same
    ? prev.workloads.filter((p) => !rolled.some((r) => r.kind === p.kind && r.name === p.name))
    : [];
  const rollout: RolloutRecord = {
    version,
    ...(renewedAt ? { renewedAt } : {}),
    startedAt: now.toISOString(),
    workloads: [...others, ...rolled.map((r) => ({ kind: r.kind, name: r.name, generation: r.generation }))],
  };
  const why =
    roll.reason === 'NewVersion'
      ? `to ${version}`
      : roll.reason === 'LinkRenewed'
        ? `for the link renewed at ${renewedAt}`
        : `to ${version} (they did not carry it)`;
  return {
    current: { ...current, rollout },
    events: [
      { type: 'Normal', reason: 'RollingOut', note: `Rolling ${rolled.map(named).join(', ')} ${why}` },
    ],
  };
}

/** Ready while the rollout is stalled (it wins over Published: the new version is not served). */
export function rolloutStalledMessage(rec: RolloutRecord): string {
  return rec.via === 'Sync'
    ? `Published ${rec.version}, but not every pod serves it: ${rec.stalled}. Each pod keeps serving what it served; see the pod's sync container log`
    : `Published ${rec.version}, but its rollout does not complete: ${rec.stalled}. The previous pods keep serving; see kubectl rollout status`;
}
