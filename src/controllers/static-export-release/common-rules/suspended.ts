import { type Rule, rule } from '../../rule-ladder.ts';
import { none } from '../release-decisions.ts';
import type { Decision, Observed } from '../release-model.ts';

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
