// Whether an extracted site may replace the one served: a pure check on its summary, shared by the
// operator (before it publishes a new version) and the CLI (before `export`/`fetch` commit).
import type { SiteSummary } from './site-check.ts';

export interface GateLimits {
  /** Fewest pages accepted (0: any number). */
  minPages: number;
  /** Largest drop in pages against the served site, in percent (100: no limit). */
  maxPageDropPercent: number;
  /** Whether `index.html` must be at the site root. */
  requireIndex: boolean;
}

export const DEFAULT_GATE: GateLimits = { minPages: 1, maxPageDropPercent: 50, requireIndex: true };

export type GateVerdict = { ok: true } | { ok: false; message: string };

/**
 * `servedPages` is the page count of the site served now (undefined: nothing served, or served
 * before page counts were recorded), the baseline of the drop check.
 */
export function checkPublishGate(site: SiteSummary, limits: GateLimits, servedPages?: number): GateVerdict {
  const problems: string[] = [];
  if (limits.requireIndex && !site.hasIndex) problems.push('it has no index.html at its root');
  if (site.pages < limits.minPages) {
    problems.push(`it has ${site.pages} pages, fewer than the minimum of ${limits.minPages}`);
  }
  if (servedPages !== undefined && servedPages > 0 && site.pages < servedPages) {
    const drop = ((servedPages - site.pages) / servedPages) * 100;
    if (drop > limits.maxPageDropPercent) {
      problems.push(
        `its page count dropped from ${servedPages} to ${site.pages} (${Math.round(drop)}%, more than the allowed ${limits.maxPageDropPercent}%)`,
      );
    }
  }
  return problems.length ? { ok: false, message: problems.join('; ') } : { ok: true };
}
