import { type Rule, rule } from '../../rule-ladder.ts';
import { recordedJob } from '../export/export-site.ts';
import type { Decision, PlatformCase } from '../release-model.ts';

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
