// What both sources observe of the target and the workloads: whether the target can take values at
// all, and whether it still holds what is served, with the workloads serving it.
import type { StaticExportRelease } from '../../../crd/index.ts';
import { TARGET_RECHECK_MS } from '../../../targets/failures.ts';
import type { Target } from '../../../targets/target.ts';
import { targetFor } from '../../../targets/target-kinds.ts';
import { findWorkloads } from '../../../targets/workloads.ts';
import { type Failure, failure } from '../../failures.ts';
import type { Observed, Status } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import { syncUnderWay } from '../rollout/content-sync.ts';

type Options = Pick<ReleaseReconcilerOptions, 'kube' | 'reads' | 'labelledWorkloads'>;

export function targetOf(options: Options, release: StaticExportRelease): Target {
  return targetFor({ kube: options.kube, release, secrets: options.reads?.secrets });
}

/**
 * A HelmRelease or Application that does not read what the operator writes is the user's to fix
 * first: nothing is exported (or pulled) for a target that cannot serve it.
 */
export async function targetProblem(
  options: Options,
  release: StaticExportRelease,
  signal: AbortSignal | undefined,
): Promise<Failure | undefined> {
  const problem = await targetOf(options, release).problem(signal);
  return problem ? failure('TargetMisconfigured', problem, true, TARGET_RECHECK_MS) : undefined;
}

type Serving = Pick<Observed, 'targetDrifted' | 'workloads' | 'missingWorkloads'>;

/**
 * Whether the target still holds what is served, `held` saying which version its values carry, and
 * the workloads serving it. Nothing served: nothing drifted, no workload looked at.
 */
export async function serving(
  options: Options,
  release: StaticExportRelease,
  held: (current: NonNullable<Status['current']>) => string | undefined,
  signal: AbortSignal | undefined,
): Promise<Serving> {
  const current = release.status?.current;
  if (current?.version === undefined) return { targetDrifted: false };
  const [version, found] = await Promise.all([
    targetOf(options, release).version(signal),
    findWorkloads(
      options.kube,
      release.metadata.namespace ?? '',
      release.spec.target.valuesSecret?.name,
      release.spec.rollout.workloadRefs ?? [],
      { signal, labelled: options.labelledWorkloads, pods: syncUnderWay(release) },
    ),
  ]);
  return {
    targetDrifted: version !== held(current),
    workloads: found.workloads,
    ...(found.missing.length ? { missingWorkloads: found.missing } : {}),
  };
}
