import { none } from '../release-decisions.ts';
import { type Observed, type Rule, rule } from '../release-model.ts';

/** Being deleted: nothing more is done (the values Secret goes with it, by owner reference). */
export const deleting: Rule<{ o: Observed }> = rule('deleting', ({ o: { release } }) =>
  release.metadata.deletionTimestamp ? none(release.status ?? {}) : undefined,
);
