// Conditions per the Kubernetes API conventions (cert-manager style): keyed by type,
// lastTransitionTime moves only when the status changes, observedGeneration on each.
// Reconciling and Stalled follow kstatus (what Flux, kpt, Config Sync and `kubectl wait`-style tools
// read): "abnormal-true" conditions, present only while True and removed otherwise.
import { z } from 'zod';

export const conditionSchema = z
  .object({
    type: z
      .string()
      .max(316)
      .describe(
        'Ready (serving / done), Reconciling (work under way), Stalled (needs you), or a kind-specific one.',
      ),
    status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
    reason: z.string().max(1024).describe('One word (CamelCase) saying why; docs/spec lists each reason.'),
    message: z.string().max(32768).describe('What happened and, when something went wrong, what to do.'),
    lastTransitionTime: z.iso.datetime().describe('When status last changed.'),
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('The metadata.generation this condition was set for.'),
  })
  .describe('One condition: the Kubernetes API conventions (metav1.Condition).');
export type Condition = z.infer<typeof conditionSchema>;

/** `R`: the reasons a controller may write (the runtime takes any). */
export type ConditionInput<R extends string = string> = Pick<Condition, 'type' | 'status' | 'message'> & {
  reason: R;
};
/** A condition to remove (Reconciling and Stalled are never stored as False). */
interface ConditionRemoval {
  type: string;
  absent: true;
}
export type ConditionChange<R extends string = string> = ConditionInput<R> | ConditionRemoval;

export const READY = 'Ready';
export const RECONCILING = 'Reconciling';
const STALLED = 'Stalled';

export const absent = (type: string): ConditionRemoval => ({ type, absent: true });

function setCondition(
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

/** Sets (or removes) several conditions on a status object at once. */
export function withConditions<S extends { conditions?: Condition[] }>(
  status: S,
  conditions: readonly ConditionChange[],
  generation: number | undefined,
  now: Date,
): S {
  let list = status.conditions;
  for (const c of conditions) {
    list = 'absent' in c ? list?.filter((x) => x.type !== c.type) : setCondition(list, c, generation, now);
  }
  return list === undefined ? status : { ...status, conditions: list };
}

export interface Progress<R extends string = string> {
  reason: R;
  message: string;
}

/**
 * kstatus's pair: Stalled=True when the object cannot progress without the user (it wins: no
 * Reconciling then), else Reconciling=True while work is under way; each absent otherwise.
 * kstatus reads Stalled as Failed, Reconciling as InProgress, and then Ready=True as Current.
 */
export function progressConditions<R extends string>(p: {
  reconciling?: Progress<R>;
  stalled?: Progress<R>;
}): ConditionChange<R>[] {
  const { reconciling, stalled } = p;
  if (stalled) {
    return [
      { type: STALLED, status: 'True', reason: stalled.reason, message: stalled.message },
      absent(RECONCILING),
    ];
  }
  return [
    absent(STALLED),
    reconciling
      ? { type: RECONCILING, status: 'True', reason: reconciling.reason, message: reconciling.message }
      : absent(RECONCILING),
  ];
}
