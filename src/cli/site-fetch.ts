// One site fetch with every check `fetch` makes (caps, site check, publish gate, version match), from
// a bundle link or a site image: shared by `fetch` (one shot) and `sync` (each new version), with the
// flags that tune those checks.
import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import type { SiteSummary } from '../bundle/site-check.ts';
import type { SiteSource } from '../sync/secret.ts';
import {
  type BundleLimitFlags,
  bundleDownload,
  bundleLimitOptions,
  downloadTimeoutOption,
  limitsFrom,
} from './bundle-options.ts';
import type { CliContext } from './context.ts';
import { usageError } from './exit-codes.ts';
import { readFlagFile } from './flag-file.ts';
import { cliLogger, integer } from './options.ts';
import { type RegistryFlags, registryClientFor, registryOptions } from './registry-options.ts';
import { type SiteGateFlags, siteGate, siteGateOptions } from './site-gate.ts';

export interface SiteCheckFlags extends SiteGateFlags, BundleLimitFlags, RegistryFlags {
  verifyKey?: string;
  retries: number;
  timeout: number;
}

/** --verify-key: the cosign public key a site image must be signed with. */
export function verifyKeyOption(command: Command): Command {
  return command.option(
    '--verify-key <pem>',
    'with a site image: refuse it unless a cosign signature by this public key covers its digest',
  );
}

/**
 * The checks of a fetched site (--min-pages...), download tuning (--retries, --timeout), the bundle
 * caps and the registry flags. `dest` names, in the help, the directory --max-page-drop compares with.
 */
export function siteCheckOptions(command: Command, ctx: CliContext, dest: string): Command {
  siteGateOptions(command, dest)
    .option(
      '--retries <n>',
      'attempts again after a failed download attempt, up to n times in a row without progress (0: one attempt only)',
      integer(0),
      5,
    )
    .addOption(downloadTimeoutOption(ctx, '--timeout'));
  return registryOptions(bundleLimitOptions(command));
}

interface SiteFetch {
  source: SiteSource;
  /** Directory that receives the site (replaced as a whole, or left untouched). */
  dest: string;
  /** The served site --max-page-drop compares with (default: `dest`). */
  served?: string;
  force?: boolean;
  expectVersion?: string;
  expectedSize?: number;
  signal?: AbortSignal;
}

interface FetchedSite {
  version: string;
  files: number;
  sizeBytes: number;
  site: SiteSummary;
  path: string;
  /** Site images: the pulled reference and whether its signature was verified. */
  reference?: string;
  verified?: boolean;
  /** Bundles: the archive digest. */
  sha256?: string;
}

/** Fetches one site into `dest` with every check; on any refusal `dest` is left as it was. */
export async function fetchSite(
  job: SiteFetch,
  flags: SiteCheckFlags,
  ctx: CliContext,
): Promise<FetchedSite> {
  const gate = siteGate(flags, job.served ?? job.dest);
  if ('oci' in job.source) return fetchImage(job.source.oci, job, gate, flags, ctx);
  // The old generation grows by 30 % of what a full collection left, not by V8's factor of up to 4:
  // the tree of 200,000 entries (paths for the content version, 25 MB) lives to the end, and the
  // parser's garbage on top took the peak RSS to 104-108 MiB; with this 96-97 MiB.
  setFlagsFromString('--heap-growing-percent=30');
  // Loaded on demand so `--help` and usage errors stay cheap (see main.ts).
  const { fetchBundle } = await import('../bundle/index.ts');
  const fetched = await fetchBundle({
    url: job.source.url,
    dest: job.dest,
    ...(job.force ? { force: true } : {}),
    ...(job.expectVersion === undefined ? {} : { expectVersion: job.expectVersion }),
    ...(job.expectedSize === undefined ? {} : { expectedSize: job.expectedSize }),
    ...(job.signal ? { signal: job.signal } : {}),
    ...bundleDownload(flags, { retries: flags.retries, deadlineMs: flags.timeout }, cliLogger(ctx)),
    gate,
  });
  return { ...fetched };
}

/** The site image at REGISTRY/REPOSITORY@sha256:… (a registry source inside the gap). */
async function fetchImage(
  reference: string,
  job: SiteFetch,
  gate: (site: SiteSummary) => Promise<void>,
  flags: SiteCheckFlags,
  ctx: CliContext,
): Promise<FetchedSite> {
  const { parseOciReference } = await import('../oci/reference.ts');
  const ref = parseOciReference(reference.startsWith('oci://') ? reference : `oci://${reference}`, '--oci');
  if (!ref.digest || ref.tag) {
    throw usageError(
      `--oci ${reference} must name a digest and no tag: REGISTRY/REPOSITORY@sha256:<64 hex> (status.current.version of the release; a tag could move under the pods).`,
    );
  }
  const publicKey =
    flags.verifyKey === undefined ? undefined : await readFlagFile('--verify-key', flags.verifyKey);
  const { pullSiteImage } = await import('../oci/pull.ts');
  const { assertVersion } = await import('../bundle/index.ts');
  const client = await registryClientFor(ref, flags, ctx, { timeoutMs: flags.timeout });
  try {
    const { staged, verified } = await pullSiteImage(client, ref.repository, ref.digest, job.dest, {
      ...(job.force ? { force: true } : {}),
      ...(publicKey ? { publicKey, publicKeyField: '--verify-key' } : {}),
      limits: limitsFrom(flags),
    });
    try {
      assertVersion(staged.version, job.expectVersion);
      await gate(staged.site);
      const path = await staged.commit();
      return {
        reference: `${ref.registry}/${ref.repository}@${ref.digest}`,
        version: staged.version,
        files: staged.files,
        sizeBytes: staged.bytes,
        site: staged.site,
        verified,
        path,
      };
    } catch (error) {
      await staged.discard();
      throw error;
    }
  } finally {
    await client.close();
  }
}
