import { type Rule, rule } from '../../rule-ladder.ts';
import { failed } from '../release-decisions.ts';
import type { Decision, RegistryCase } from '../release-model.ts';
import { withinInterval } from './registry-schedule.ts';

/** Resolving the tag failed: looked at, even if in vain; the next look follows the failure's retry rule. */
export const ociCheckFailed: Rule<RegistryCase, Decision> = rule('ociCheckFailed', ({ o, status }) =>
  o.check?.kind === 'failed' ? failed(status, withinInterval(o.release, o.check.failure)) : undefined,
);
