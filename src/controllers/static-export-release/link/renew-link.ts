import { type Rule, rule } from '../../rule-ladder.ts';
import { recordedJob } from '../export/export-site.ts';
import type { Decision, PlatformCase } from '../release-model.ts';

/** The served link reached its renewal time: a fresh one for the served job. */
export const renewLink: Rule<PlatformCase, Decision> = rule('renewLink', ({ o, status }) => {
  const c = status.current;
  const renewal = c?.renewalTime ? Date.parse(c.renewalTime) : undefined;
  if (!c?.jobId || renewal === undefined || o.now.getTime() < renewal) return undefined;
  return { action: { kind: 'publish', mode: 'Renew', ...recordedJob(c) }, status, events: [] };
});
