// spec.rollout.onNewContent Sync: nothing rolls. The values Secret carries the new version, the
// pods' content sync sidecars swap to it, and the operator watches what every ready pod reports
// serving until all serve it. A report counts only when its sync container runs and it is newer than
// the version's publish (docs/spec/static-export-release.md says what the operator trusts). Pure
// functions of the release, the workloads observed and the clock.
import type { StaticExportRelease } from '../../../crd/index.ts';
import { scrub } from '../../../redact.ts';
import type { PodContent } from '../../../targets/pod-content.ts';
import type { Workload } from '../../../targets/workloads.ts';
import { judge, named, type RolloutRecord, type RolloutWatch } from './rollout.ts';

/** Whether the served version's sync is still to be confirmed (the pods are read only then). */
export function syncUnderWay(release: StaticExportRelease): boolean {
  if (release.spec.rollout.onNewContent !== 'Sync') return false;
  const c = release.status?.current;
  const rec = c?.rollout;
  return c?.version !== undefined && !(rec?.via === 'Sync' && rec.version === c.version && rec.completedAt);
}

/**
 * When `version` was published, to the second (condition times have no finer precision): a pod's
 * report older than that is about an earlier publish, or was written by someone else.
 */
function publishedAt(release: StaticExportRelease, rec: RolloutRecord): number {
  const at = release.status?.history?.find((h) => h.version === rec.version)?.appliedAt ?? rec.startedAt;
  return Math.floor(Date.parse(at) / 1000) * 1000;
}

const fresh = (p: PodContent, since: number) => p.since !== undefined && Date.parse(p.since) >= since;

/** Why a pod reporting `version` does not count: its sidecar is not running, or the report is stale. */
function distrust(p: PodContent, version: string, since: number): string | undefined {
  if (p.served !== version) return undefined;
  if (!p.syncReady)
    return `pod ${p.name} reports serving ${version}, but its sync container is not running and ready`;
  if (!fresh(p, since))
    return `pod ${p.name} reports serving ${version} since ${p.since ?? 'an unknown time'}, before it was published at ${new Date(since).toISOString()}`;
  return undefined;
}

/** How far one workload's pods are: undefined when every ready pod serves `version`. */
function behind(
  w: Workload,
  version: string,
  since: number,
): { failing?: string; waiting?: string } | undefined {
  const pods = w.pods ?? [];
  if (!pods.length) return { waiting: `${named(w)} has no ready pod` };
  const failing = pods.find((p) => p.served !== version && p.failure && fresh(p, since));
  // The sidecar redacts its message; scrubbed again, since status and events are read widely.
  if (failing) return { failing: `${named(w)} pod ${failing.name}: ${scrub(failing.failure ?? '')}` };
  const late = pods.filter((p) => p.served !== version || distrust(p, version, since));
  if (!late.length) return undefined;
  const silent = late.find((p) => p.served === undefined);
  const doubted = late.map((p) => distrust(p, version, since)).find((d) => d !== undefined);
  return {
    waiting: silent
      ? `${named(w)} pod ${silent.name} reports no served version (does it run the content sync sidecar, staticExport.sync.enabled?)`
      : doubted
        ? `${named(w)} ${doubted}`
        : `${named(w)}: ${pods.length - late.length} of ${pods.length} ready pods serve ${version}`,
  };
}

/**
 * The sync of the served version: recorded when it is new, then judged from the pods until every
 * ready pod of every workload serves it; undefined when nothing is served or it completed.
 */
export function syncStep(
  release: StaticExportRelease,
  workloads: readonly Workload[] | undefined,
  now: Date,
): RolloutWatch | undefined {
  const version = release.status?.current?.version;
  // No workload yet: nothing serves it; a chart installed later starts the sync then.
  if (!version || !workloads?.length) return undefined;
  const rec = release.status?.current?.rollout;
  if (rec?.via !== 'Sync' || rec.version !== version) {
    const rollout: RolloutRecord = {
      version,
      via: 'Sync',
      startedAt: now.toISOString(),
      workloads: workloads.map((w) => ({ kind: w.kind, name: w.name, generation: w.generation })),
    };
    return {
      kind: 'watch',
      rollout,
      events: [
        {
          type: 'Normal',
          reason: 'Syncing',
          note: `Syncing ${version} to the pods of ${workloads.map(named).join(', ')}`,
        },
      ],
      requeueAfterMs: 1_000,
    };
  }
  if (rec.completedAt) return undefined;

  const judged = rec.workloads
    .map((r) => workloads.find((w) => w.kind === r.kind && w.name === r.name))
    .filter((w): w is Workload => w !== undefined)
    .map((w) => behind(w, version, publishedAt(release, rec)))
    .filter((b) => b !== undefined);
  const failing = judged.find((b) => b.failing)?.failing;
  return judge(
    release,
    rec,
    now,
    judged.length
      ? {
          ...(failing ? { failed: failing } : {}),
          waiting: `${judged.flatMap((b) => b.waiting ?? []).join('; ')}, not synced`,
        }
      : undefined,
    {
      type: 'Normal',
      reason: 'Synced',
      note: `Every ready pod of ${rec.workloads.map(named).join(', ')} serves ${version}`,
    },
  );
}
