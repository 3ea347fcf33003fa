// The registry source's rules: a failed tag check, a new digest to pull, a target to write again.

import { type Rule, rule } from '../../rule-ladder.ts';
import { failed } from '../release-decisions.ts';
import type { Decision, RegistryCase } from '../release-model.ts';
import { refused, servedDigest, withinInterval } from './registry-schedule.ts';

/** The tag names a digest not served (and not refused under this spec): it is pulled. */
export const ociNewDigest: Rule<RegistryCase, Decision> = rule('ociNewDigest', ({ o, status }) => {
  if (o.check?.kind !== 'resolved') return undefined;
  const seen = { ...o.release, status };
  if (o.check.digest === servedDigest(seen, o.oci) || refused(seen)) return undefined;
  return { action: { kind: 'pull', digest: o.check.digest }, status, events: [] };
});

/** Resolving the tag failed: looked at, even if in vain; the next look follows the failure's retry rule. */
export const ociCheckFailed: Rule<RegistryCase, Decision> = rule('ociCheckFailed', ({ o, status }) =>
  o.check?.kind === 'failed' ? failed(status, withinInterval(o.release, o.check.failure)) : undefined,
);

/** The target no longer holds the served reference: written again from status. */
export const ociRewrite: Rule<RegistryCase, Decision> = rule('ociRewrite', ({ o, status }) =>
  status.current?.version && o.targetDrifted
    ? { action: { kind: 'rewrite' }, status, events: [] }
    : undefined,
);
