import { type Rule, rule } from '../../rule-ladder.ts';
import { none } from '../release-decisions.ts';
import type { Decision, Observed } from '../release-model.ts';

/** Being deleted: nothing more is done (the values Secret goes with it, by owner reference). */
export const deleting: Rule<{ o: Observed }, Decision> = rule('deleting', ({ o: { release } }) =>
  release.metadata.deletionTimestamp ? none(release.status ?? {}) : undefined,
);
