import { failed } from '../release-decisions.ts';
import { type Observed, type Rule, rule, type Status } from '../release-model.ts';

/** A problem found before any call (spec, Secret, key, target): it is all there is to say. */
export const blocked: Rule<{ o: Observed; status: Status }> = rule('blocked', ({ o, status }) =>
  o.blocked ? failed(status, o.blocked) : undefined,
);
