import { type Rule, rule } from '../../rule-ladder.ts';
import type { Decision, RegistryCase } from '../release-model.ts';
import { refused, servedDigest } from './registry-schedule.ts';

/** The tag names a digest not served (and not refused under this spec): it is pulled. */
export const ociNewDigest: Rule<RegistryCase, Decision> = rule('ociNewDigest', ({ o, status }) => {
  if (o.check?.kind !== 'resolved') return undefined;
  const seen = { ...o.release, status };
  if (o.check.digest === servedDigest(seen, o.oci) || refused(seen)) return undefined;
  return { action: { kind: 'pull', digest: o.check.digest }, status, events: [] };
});
