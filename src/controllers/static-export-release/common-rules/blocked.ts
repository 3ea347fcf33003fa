import { type Rule, rule } from '../../rule-ladder.ts';
import { failed } from '../release-decisions.ts';
import type { Decision, Observed, Status } from '../release-model.ts';

/** A problem found before any call (spec, Secret, key, target): it is all there is to say. */
export const blocked: Rule<{ o: Observed; status: Status }, Decision> = rule('blocked', ({ o, status }) =>
  o.blocked ? failed(status, o.blocked) : undefined,
);
