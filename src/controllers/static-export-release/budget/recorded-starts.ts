// What a release brings to its start budget group: the group it is in (named, or its key's), and the
// starts its status records, which a restarted operator counts (pure).
import { HOUR_MS, inWindow, oneJobAtATimeOf } from '../../../api/index.ts';
import type { StaticExportRelease } from '../../../crd/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../../project.ts';
import { exportTarget } from '../export/export-site.ts';
import type { GroupRef, Member } from './start-budget.ts';

/**
 * A release's group: the one spec.startBudget names, else its admin key's (by digest, never the
 * key). A key's group is the organization's as far as the operator can tell; a rotated key's group
 * takes the count on (see StartBudgets.declare).
 */
export function budgetGroup(named: string | undefined, keyId: string): GroupRef {
  return named === undefined ? { name: `key-${keyId}`, byKey: true } : { name: named, byKey: false };
}

/** The starts a release's status records: those it made (refused ones too), and one whose outcome it never learnt. */
export function recordedStarts({ status }: Pick<StaticExportRelease, 'status'>): number[] {
  const s = status ?? {};
  return [...(s.recentStarts ?? []), ...(s.start ? [s.start.since] : [])].map((at) => Date.parse(at));
}

/** The starts of the last hour, newest first, with one made at `now`: what a restarted operator counts. */
export function withRecordedStart(recent: readonly string[] | undefined, now: Date): string[] {
  return [
    now.toISOString(),
    ...(recent ?? []).filter((at) => inWindow(Date.parse(at), now.getTime(), HOUR_MS)),
  ].slice(0, EXPORT_STARTS_PER_HOUR);
}

/** The recorded starts without the one made at `at` (its request never went out). */
export function withoutRecordedStart(recent: readonly string[] | undefined, at: string): string[] {
  return (recent ?? []).filter((t) => t !== at);
}

/**
 * What its group's budget knows of a release. `interval`: how often it asks for a start on its own
 * (schedule.ts `startDemandIntervalMs`: its interval, a failing site's shorter retry delay, none
 * when pinned); `shareKey`: the export it shares with other releases.
 */
export function memberOf(
  release: StaticExportRelease,
  interval: number | undefined,
  shareKey?: string,
): Member {
  const { spec, status } = release;
  const last = status?.export?.startedAt;
  const share = spec.startBudget?.startsPerHour;
  const project = oneJobAtATimeOf(exportTarget(spec));
  return {
    ...(interval === undefined ? {} : { intervalMs: interval }),
    ...(last === undefined ? {} : { lastStart: Date.parse(last) }),
    ...(shareKey === undefined ? {} : { shareKey }),
    ...(project === undefined ? {} : { project }),
    ...(share === undefined ? {} : { startsPerHour: share }),
    recorded: recordedStarts(release),
  };
}
