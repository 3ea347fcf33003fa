// Rolling the workloads: the effect of rolloutStep's roll (rollout.ts decides it and watches the
// rollout on) and the pure fold of its outcome.
import type { StaticExportRelease } from '../../../crd/index.ts';
import { rollWorkload, type WorkloadRef } from '../../../targets/workloads.ts';
import type { ReconcileResult } from '../../types.ts';
import { meant, type Of, type ReleaseRun, type Step, settle } from '../release-effect.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import type { Look } from '../sources/source.ts';
import { afterRoll } from './rollout.ts';

/** Rolls the workloads that do not carry the served version's annotations. */
export async function rollWorkloads(
  options: Pick<ReleaseReconcilerOptions, 'kube'>,
  { observed: { release, now } }: Look,
  action: Of<'roll'>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const namespace = release.metadata.namespace ?? '';
  const rolled = [];
  for (const w of action.workloads)
    rolled.push({ ...w, generation: await rollWorkload(options.kube, namespace, w, action.annotations) });
  return settle(run, foldRoll(meant(release, run), action, rolled, now));
}

/**
 * The rollout under way, recorded at once (Reconciling), not only at the next look, which comes
 * soon to watch it.
 */
export function foldRoll(
  release: StaticExportRelease,
  action: Of<'roll'>,
  rolled: readonly (WorkloadRef & { generation: number })[],
  now: Date,
): Step {
  const next = afterRoll(release, action, rolled, now);
  const status = release.status ?? {};
  return {
    kind: 'commit',
    status: { ...status, current: next.current },
    events: next.events,
    requeueAfterMs: 1_000,
  };
}
