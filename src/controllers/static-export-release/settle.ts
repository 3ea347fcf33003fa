// The foot of the ladder: nothing to fetch or publish. The workloads roll or are watched; else
// nothing is done until the next work due on its own.
import { failed, none } from '../decision.ts';
import type { Failure } from '../failures.ts';
import type { Decision, Observed, Status } from './model.ts';
import { rolloutStep } from './rollout.ts';
import { syncStep } from './sync.ts';

/** `nextWorkMs`: until the next work due on its own (link renewal, the next interval or tag check). */
export function settle(o: Observed, status: Status, nextWorkMs: number | undefined): Decision {
  const { release, now } = o;
  let steady = status;
  const step =
    release.spec.rollout.onNewContent === 'Sync'
      ? syncStep(release, o.workloads, now)
      : rolloutStep(release, o.workloads, now);
  if (step?.kind === 'roll') return { action: step, status: steady, events: [] };
  if (step && steady.current) steady = { ...steady, current: { ...steady.current, rollout: step.rollout } };
  const missing = o.missingWorkloads ?? [];
  if (missing.length) {
    const f: Failure = {
      reason: 'WorkloadNotFound',
      message: `spec.rollout.workloadRefs names ${missing.map((m) => `${m.kind}/${m.name}`).join(', ')}, not found in namespace ${release.metadata.namespace}: create it or remove the reference`,
      stalled: true,
      retryAfterMs: 60_000,
    };
    const d = failed(steady, f);
    return { ...d, events: [...(step?.events ?? []), ...d.events] };
  }
  const next = [nextWorkMs, step?.requeueAfterMs].filter((t): t is number => t !== undefined);
  return none(steady, next.length ? Math.min(...next) : undefined, step?.events ?? []);
}
