// The publish gate of `export` and `fetch`: the site in a bundle is checked before it replaces the
// destination, so a broken export never overwrites a good site (exit 5, destination untouched).
import { type Command, InvalidArgumentError } from 'commander';
import { BundleError } from '../bundle/errors.ts';
import { checkPublishGate, DEFAULT_GATE } from '../bundle/publish-gate.ts';
import { type SiteSummary, summarizeSite } from '../bundle/site-check.ts';
import { pageDropPercent } from '../crd/limits.ts';
import { integer } from './options.ts';

export interface SiteGateFlags {
  minPages: number;
  allowMissingIndex?: boolean;
  /** Percent; absent: the page count is not compared. */
  maxPageDrop?: number;
}

function percent(value: string): number {
  const p = pageDropPercent(/^\d+$/.test(value) ? Number(value) : value);
  if (p === undefined) throw new InvalidArgumentError('expected a percentage from 0% to 100%, such as 50%.');
  return p;
}

export function siteGateOptions(command: Command, dest: string): Command {
  return command
    .option(
      '--min-pages <n>',
      'refuse a site with fewer HTML pages (the root 404.html does not count)',
      integer(0),
      DEFAULT_GATE.minPages,
    )
    .option('--allow-missing-index', 'accept a site without index.html at its root')
    .option(
      '--max-page-drop <percent>',
      `refuse a site with this much fewer pages than the one now in ${dest} (e.g. 50%)`,
      percent,
    );
}

/** Pages of the site now at `dest`, or undefined when there is none. */
async function servedPages(dest: string): Promise<number | undefined> {
  try {
    return (await summarizeSite(dest)).pages;
  } catch (error) {
    // Nothing there yet (or not a directory, which the extraction then reports): no baseline.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The `gate` of fetchBundle; `dest` is the user's destination (undefined: a scratch directory). */
export function siteGate(
  flags: SiteGateFlags,
  dest: string | undefined,
): (site: SiteSummary) => Promise<void> {
  return async (site) => {
    const served = flags.maxPageDrop !== undefined && dest ? await servedPages(dest) : undefined;
    const verdict = checkPublishGate(
      site,
      {
        minPages: flags.minPages,
        requireIndex: flags.allowMissingIndex !== true,
        maxPageDropPercent: flags.maxPageDrop ?? 100,
      },
      served,
    );
    if (verdict.ok) return;
    const kept = dest ? `; ${dest} was left as it was` : '';
    throw new BundleError(
      'PublishGate',
      `the site in the bundle was refused: ${verdict.message}${kept} (--min-pages, --allow-missing-index and --max-page-drop set the checks)`,
    );
  };
}
