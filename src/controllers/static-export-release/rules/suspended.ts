import { absent, RECONCILING } from '../../../runtime/conditions.ts';
import { withConditions } from '../../conditions.ts';
import { none } from '../decision.ts';
import type { Observed, Rule } from '../model.ts';

/** Suspended: nothing is under way any more, and this spec is seen (kstatus must not wait on it). */
export const suspended: Rule<Observed> = ({ release, now }) => {
  if (!release.spec.suspend) return undefined;
  const gen = release.metadata.generation;
  const status = release.status ?? {};
  const seen = gen === undefined ? status : { ...status, observedGeneration: gen };
  return none(withConditions(seen, [absent(RECONCILING)], gen, now));
};
