import { failed } from '../release-decisions.ts';
import { type RegistryCase, type Rule, rule } from '../release-model.ts';
import { withinInterval } from './registry-schedule.ts';

/** Resolving the tag failed: looked at, even if in vain; the next look follows the failure's retry rule. */
export const ociCheckFailed: Rule<RegistryCase> = rule('ociCheckFailed', ({ o, status }) =>
  o.check?.kind === 'failed' ? failed(status, withinInterval(o.release, o.check.failure)) : undefined,
);
