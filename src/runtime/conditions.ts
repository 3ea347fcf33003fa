// Conditions per the Kubernetes API conventions (cert-manager style): keyed by type,
// lastTransitionTime moves only when the status changes, observedGeneration on each.
import type { Condition } from '../crd/common.ts';

export type ConditionInput = Pick<Condition, 'type' | 'status' | 'reason' | 'message'>;

export function setCondition(
  existing: readonly Condition[] | undefined,
  next: ConditionInput,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const list = [...(existing ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const condition: Condition = {
    ...next,
    lastTransitionTime: prev && prev.status === next.status ? prev.lastTransitionTime : now.toISOString(),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) list[i] = condition;
  else list.push(condition);
  return list;
}

export function getCondition(list: readonly Condition[] | undefined, type: string): Condition | undefined {
  return list?.find((c) => c.type === type);
}

/** Sets several conditions on a status object at once. */
export function withConditions<S extends { conditions?: Condition[] }>(
  status: S,
  conditions: readonly ConditionInput[],
  generation: number | undefined,
  now: Date,
): S {
  let list = status.conditions;
  for (const c of conditions) list = setCondition(list, c, generation, now);
  return { ...status, conditions: list };
}
