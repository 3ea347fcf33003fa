// Whether a finished export's content may replace what a release serves (spec.publishGate), pure.
import {
  checkPublishGate,
  type GateLimits,
  type GateVerdict,
  type SiteSummary,
} from '../../../bundle/index.ts';
import type { StaticExportRelease } from '../../../crd/index.ts';
import { pageDropPercent } from '../../../crd/limits.ts';

/** The release's gate as limits; undefined when it is disabled. */
function gateLimits(release: StaticExportRelease): GateLimits | undefined {
  const g = release.spec.publishGate;
  if (g.disabled) return undefined;
  // The schema has already refused any other maxPageDrop.
  return {
    minPages: g.minPages,
    maxPageDropPercent: pageDropPercent(g.maxPageDrop) ?? 50,
    requireIndex: true,
  };
}

/**
 * Judges new content against the site served now. Content already served passes: it is not new,
 * and a pinned version or a renewed link never comes here.
 */
export function judgeNewContent(
  release: StaticExportRelease,
  version: string,
  site: SiteSummary,
): GateVerdict {
  const current = release.status?.current;
  const limits = gateLimits(release);
  if (!limits || current?.version === version) return { ok: true };
  return checkPublishGate(site, limits, current?.pageCount);
}
