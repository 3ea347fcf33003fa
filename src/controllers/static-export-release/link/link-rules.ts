// When the served job's link is asked for afresh: its renewal time reached, or the target lost it.
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

/** The target no longer holds the served version: the link is never stored, so restoring it takes a fresh one. */
export const repairTarget: Rule<PlatformCase, Decision> = rule('repairTarget', ({ o, status }) => {
  const jobId = status.current?.jobId;
  if (!jobId || !o.targetDrifted) return undefined;
  return {
    action: { kind: 'publish', mode: 'Repair', ...recordedJob(status.current ?? {}) },
    status,
    events: [],
  };
});
