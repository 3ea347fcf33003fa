// The rules both sources share, first on the ladder: nothing else is looked at while one applies.

import { type Rule, rule } from '../../rule-ladder.ts';
import { failed, none } from '../release-decisions.ts';
import type { Decision, Observed, Status } from '../release-model.ts';

/** A problem found before any call (spec, Secret, key, target): it is all there is to say. */
export const blocked: Rule<{ o: Observed; status: Status }, Decision> = rule('blocked', ({ o, status }) =>
  o.blocked ? failed(status, o.blocked) : undefined,
);

/** Being deleted: nothing more is done (the values Secret goes with it, by owner reference). */
export const deleting: Rule<{ o: Observed }, Decision> = rule('deleting', ({ o: { release } }) =>
  release.metadata.deletionTimestamp ? none(release.status ?? {}) : undefined,
);

/**
 * Suspended: this spec is seen (kstatus must not wait on it); nothing is under way any more (its
 * conditions say so at commit).
 */
export const suspended: Rule<{ o: Observed }, Decision> = rule('suspended', ({ o: { release } }) => {
  if (!release.spec.suspend) return undefined;
  const gen = release.metadata.generation;
  const status = release.status ?? {};
  return none(gen === undefined ? status : { ...status, observedGeneration: gen });
});
