// A site version for `mirror push` and `mirror save`, from a bundle link (--url or the environment),
// a bundle file (--bundle) or an extracted site (--site): the flags that name it and annotate its
// image, and the pipeline that reads, checks and packages it.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Command, InvalidArgumentError } from 'commander';
import { DEFAULT_GATE } from '../bundle/publish-gate.ts';
import type { StagedSite } from '../oci/bundle-layer.ts';
import type { PackagedSite, RegistryClient } from '../oci/index.ts';
import {
  type BundleDownload,
  type BundleLimitFlags,
  bundleLimitOptions,
  downloadTimeoutOption,
} from './bundle-options.ts';
import type { CliContext } from './context.ts';
import { usageError } from './exit-codes.ts';
import { bundleUrlFrom, checkDomain, ENV, integer } from './options.ts';
import type { Reporter } from './output.ts';
import { siteGate } from './site-gate.ts';

export interface SiteSourceFlags extends BundleLimitFlags {
  url?: string;
  bundle?: string;
  site?: string;
  domain: string;
  exportJobId?: string;
  created?: string;
  timeout: number;
  json?: boolean;
  minPages: number;
  allowMissingIndex?: boolean;
}

function isoTime(value: string): string {
  const time = new Date(value);
  if (Number.isNaN(time.getTime()))
    throw new InvalidArgumentError('expected an ISO time such as 2026-01-31T12:00:00Z.');
  return time.toISOString();
}

export function siteSourceOptions(command: Command, ctx: CliContext): Command {
  command
    .option('--url <url>', `bundle link (else env ${ENV.bundleUrl})`)
    .option('--bundle <file>', 'bundle archive (.tar.gz) on disk, e.g. from `mirror --dir`')
    .option('--site <dir>', 'an extracted site (e.g. `fetch --dest`) instead of a bundle')
    .requiredOption('--domain <host>', 'site the version belongs to, a bare host (annotation)', checkDomain)
    .option('--export-job-id <id>', 'export job the bundle came from (annotation)')
    .option(
      '--created <time>',
      'when the content was exported (annotation; default 1970-01-01: same content, same digest)',
      isoTime,
    )
    .addOption(downloadTimeoutOption(ctx, '--timeout'))
    .option(
      '--min-pages <n>',
      'refuse a site with fewer HTML pages (the root 404.html does not count)',
      integer(0),
      DEFAULT_GATE.minPages,
    )
    .option('--allow-missing-index', 'accept a site without index.html at its root');
  return bundleLimitOptions(command);
}

/** Annotations of the image from the flags. */
function siteMeta(flags: SiteSourceFlags) {
  return {
    domain: flags.domain,
    ...(flags.exportJobId ? { exportJobId: flags.exportJobId } : {}),
    ...(flags.created ? { created: flags.created } : {}),
  };
}

/** The bundle link (--url or the environment) or a file: URL (--bundle); undefined for --site. */
export async function bundleSource(flags: SiteSourceFlags, ctx: CliContext): Promise<string | undefined> {
  const given = [flags.url, flags.bundle, flags.site].filter((v) => v !== undefined).length;
  if (given > 1) throw usageError('give only one of --url, --bundle or --site.');
  if (flags.site !== undefined) return undefined;
  if (flags.bundle !== undefined) {
    if (!(await stat(flags.bundle).catch(() => undefined))?.isFile()) {
      throw usageError(`--bundle ${flags.bundle} is not a file: give a bundle .tar.gz.`);
    }
    return pathToFileURL(resolve(flags.bundle)).toString();
  }
  return bundleUrlFrom(flags.url, ctx);
}

/** A site version read and checked (gate, content version), its image built on demand. */
export interface PreparedSite {
  version: string;
  /** Builds the image (once): push asks only when the registry lacks the version. */
  packaged(): Promise<PackagedSite>;
  cleanup(): Promise<void>;
}

/**
 * Downloads/verifies/extracts the bundle at `url` (or reads the given site when there is none);
 * packages it on demand.
 */
export async function preparedSite(
  flags: SiteSourceFlags,
  url: string | undefined,
  fetching: BundleDownload,
  out: Reporter,
): Promise<PreparedSite> {
  const { packageSite } = await import('../oci/index.ts');
  const { contentVersion } = await import('../bundle/version.ts');
  // The publish gate of fetch/export: an empty or broken site never becomes a version in a registry.
  const gate = siteGate(flags, undefined);
  const meta = siteMeta(flags);
  const onDemand = (dir: string, label: string, known: { version: string; pages: number }) => {
    let packaging: Promise<PackagedSite> | undefined;
    return () => {
      if (!packaging) {
        out.progress({ key: 'package', text: `packaging ${label}` });
        packaging = packageSite(dir, meta, known);
      }
      return packaging;
    };
  };
  if (url === undefined) {
    const dir = resolve(flags.site as string);
    if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
      throw usageError(
        `--site ${flags.site} is not a directory: give the directory an extracted site is in.`,
      );
    }
    const { summarizeSite } = await import('../bundle/site-check.ts');
    const summary = await summarizeSite(dir);
    await gate(summary);
    const { version } = await contentVersion(dir);
    return {
      version,
      packaged: onDemand(dir, dir, { version, pages: summary.pages }),
      cleanup: async () => {},
    };
  }
  const { fetchBundle } = await import('../bundle/index.ts');
  const scratch = await mkdtemp(join(tmpdir(), 'static-export-mirror-'));
  const cleanup = () => rm(scratch, { recursive: true, force: true });
  try {
    const fetched = await fetchBundle({ url, dest: join(scratch, 'site'), ...fetching, gate });
    return {
      version: fetched.version,
      packaged: onDemand(fetched.path, `version ${fetched.version}`, {
        version: fetched.version,
        pages: fetched.site.pages,
      }),
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * The bundle at `url` (--url, --bundle) packaged while it downloads, its layer uploaded to
 * `repository` as it is built (see stageBundleImage). Undefined without a bundle (--site), and for
 * a bundle whose entries are not in the layer's order, which preparedSite then extracts
 * (downloading it again).
 */
export async function stagedSite(
  url: string | undefined,
  flags: SiteSourceFlags,
  fetching: BundleDownload,
  client: RegistryClient,
  repository: string,
): Promise<StagedSite | undefined> {
  if (url === undefined) return undefined;
  const { openDownload } = await import('../bundle/download.ts');
  const { resolveLimits } = await import('../bundle/limits.ts');
  const { stageBundleImage } = await import('../oci/bundle-layer.ts');
  const limits = resolveLimits(fetching.limits);
  const staged = await stageBundleImage({
    download: openDownload({
      url,
      maxBytes: limits.maxArchiveBytes,
      ...fetching.download,
      // Nothing compares the archive's digest: gzip's CRC, the tar structure and the size check it.
      digest: false,
      logger: fetching.logger,
      ...(fetching.onProgress ? { onProgress: fetching.onProgress } : {}),
    }),
    client,
    repository,
    limits,
    meta: siteMeta(flags),
    gate: siteGate(flags, undefined),
  });
  if (!staged) {
    fetching.logger.warn(
      'the bundle lists its files out of the layer order: fetching it again to extract it',
    );
  }
  return staged;
}
