// Controllers write conditions through this: the runtime's withConditions, taking only the
// reasons docs/spec documents (src/crd/reasons.ts).
import type { ConditionReason } from '../crd/reasons.ts';
import {
  type Condition,
  type ConditionChange,
  withConditions as withAnyConditions,
} from '../runtime/conditions.ts';

export const withConditions: <S extends { conditions?: Condition[] }>(
  status: S,
  conditions: readonly ConditionChange<ConditionReason>[],
  generation: number | undefined,
  now: Date,
) => S = withAnyConditions;
