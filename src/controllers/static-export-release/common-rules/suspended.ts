import { none } from '../release-decisions.ts';
import { type Observed, type Rule, rule } from '../release-model.ts';

/**
 * Suspended: this spec is seen (kstatus must not wait on it); nothing is under way any more (its
 * conditions say so at commit).
 */
export const suspended: Rule<{ o: Observed }> = rule('suspended', ({ o: { release } }) => {
  if (!release.spec.suspend) return undefined;
  const gen = release.metadata.generation;
  const status = release.status ?? {};
  return none(gen === undefined ? status : { ...status, observedGeneration: gen });
});
