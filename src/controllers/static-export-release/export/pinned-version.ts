import type { Failure } from '../../failures.ts';
import { type Rule, rule } from '../../rule-ladder.ts';
import { failed } from '../release-decisions.ts';
import type { Decision, PlatformCase } from '../release-model.ts';
import { recordedJob } from './export-site.ts';

/**
 * spec.pinnedVersion names a version not served now: the job of that version (from history) is
 * published again, or the pin is refused when history does not know it.
 */
export const pinnedVersion: Rule<PlatformCase, Decision> = rule('pinnedVersion', ({ o, status }) => {
  const pinned = o.release.spec.pinnedVersion;
  if (!pinned || status.current?.version === pinned) return undefined;
  const seen = { ...status, observedGeneration: o.release.metadata.generation };
  const entry = status.history?.find((h) => h.version === pinned);
  if (!entry?.jobId) {
    const known = status.history?.map((h) => h.version).join(', ') || 'none yet';
    const f: Failure = {
      reason: 'PinnedVersionUnknown',
      message: `spec.pinnedVersion ${pinned} is not in status.history (known: ${known}); pin one of those or remove the pin`,
      stalled: true,
    };
    return failed(seen, f);
  }
  return {
    action: { kind: 'publish', mode: 'Pin', ...recordedJob(entry), expectVersion: pinned },
    status: seen,
    events: [],
  };
});
