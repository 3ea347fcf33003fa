import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import {
  type BundleLimitFlags,
  bundleLimitOptions,
  checkDestination,
  downloadTimeoutOption,
  limitsFrom,
} from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { readFlagFile } from '../flag-file.ts';
import { BUNDLE_ENV_HELP, bundleUrlFrom, cliLogger, contentVersionArg, ENV, integer } from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';
import {
  REGISTRY_ENV_HELP,
  type RegistryFlags,
  registryClientFor,
  registryOptions,
} from '../registry-options.ts';
import { type SiteGateFlags, siteGate, siteGateOptions } from '../site-gate.ts';

interface FetchFlags extends SiteGateFlags, BundleLimitFlags, RegistryFlags {
  url?: string;
  oci?: string;
  verifyKey?: string;
  dest: string;
  force?: boolean;
  expectVersion?: string;
  expectedSize?: number;
  retries: number;
  timeout: number;
  json?: boolean;
}

async function runFetch(flags: FetchFlags, ctx: CliContext): Promise<void> {
  // An empty variable (the chart's optional Secret key) counts as unset.
  const oci = flags.oci ?? (flags.url === undefined ? ctx.env[ENV.ociReference] || undefined : undefined);
  if (oci !== undefined) return fetchImage(oci, flags, ctx);
  if (flags.verifyKey !== undefined) throw usageError('--verify-key checks a site image: use it with --oci.');
  const out = new Reporter(ctx, flags.json === true);
  const url = bundleUrlFrom(flags.url, ctx);
  await checkDestination('--dest', flags.dest, flags.force);
  // The old generation grows by 30 % of what a full collection left, not by V8's factor of up to 4:
  // the tree of 200,000 entries (paths for the content version, 25 MB) lives to the end, and the
  // parser's garbage on top took the peak RSS to 104-108 MiB; with this 96-97 MiB.
  setFlagsFromString('--heap-growing-percent=30');
  // Loaded on demand so `--help` and usage errors stay cheap (see main.ts).
  const { fetchBundle } = await import('../../bundle/index.ts');
  const fetched = await fetchBundle({
    url,
    dest: flags.dest,
    ...(flags.force ? { force: true } : {}),
    ...(flags.expectVersion === undefined ? {} : { expectVersion: flags.expectVersion }),
    ...(flags.expectedSize === undefined ? {} : { expectedSize: flags.expectedSize }),
    limits: limitsFrom(flags),
    download: { retries: flags.retries, deadlineMs: flags.timeout },
    gate: siteGate(flags, flags.dest),
    logger: cliLogger(ctx),
  });
  out.event('fetched', { ...fetched });
  out.info(
    `Fetched version ${fetched.version} (${fetched.files} files, ${fetched.site.pages} pages, ${formatBytes(fetched.sizeBytes)}) into ${fetched.path}`,
  );
}

/** `--oci`: the site image at REGISTRY/REPOSITORY@sha256:… (a registry source inside the gap). */
async function fetchImage(reference: string, flags: FetchFlags, ctx: CliContext): Promise<void> {
  if (flags.url !== undefined) throw usageError('Give --url (a bundle) or --oci (a site image), not both.');
  const out = new Reporter(ctx, flags.json === true);
  const { parseOciReference } = await import('../../oci/reference.ts');
  const ref = parseOciReference(reference.startsWith('oci://') ? reference : `oci://${reference}`, '--oci');
  if (!ref.digest || ref.tag) {
    throw usageError(
      `--oci ${reference} must name a digest and no tag: REGISTRY/REPOSITORY@sha256:<64 hex> (status.current.version of the release; a tag could move under the pods).`,
    );
  }
  await checkDestination('--dest', flags.dest, flags.force);
  const publicKey =
    flags.verifyKey === undefined ? undefined : await readFlagFile('--verify-key', flags.verifyKey);
  const { pullSiteImage } = await import('../../oci/pull.ts');
  const { assertVersion } = await import('../../bundle/index.ts');
  const client = await registryClientFor(ref, flags, ctx, { timeoutMs: flags.timeout });
  try {
    const { staged, verified } = await pullSiteImage(client, ref.repository, ref.digest, flags.dest, {
      ...(flags.force ? { force: true } : {}),
      ...(publicKey ? { publicKey, publicKeyField: '--verify-key' } : {}),
      limits: limitsFrom(flags),
    });
    try {
      assertVersion(staged.version, flags.expectVersion);
      const { site } = staged;
      await siteGate(flags, flags.dest)(site);
      const path = await staged.commit();
      out.event('fetched', {
        reference: `${ref.registry}/${ref.repository}@${ref.digest}`,
        version: staged.version,
        files: staged.files,
        sizeBytes: staged.bytes,
        site,
        verified,
        path,
      });
      out.info(
        `Fetched ${ref.registry}/${ref.repository}@${ref.digest}${verified ? ' (signature verified)' : ''}: version ${staged.version} (${staged.files} files, ${site.pages} pages, ${formatBytes(staged.bytes)}) into ${path}`,
      );
    } catch (error) {
      await staged.discard();
      throw error;
    }
  } finally {
    await client.close();
  }
}

export function registerFetch(program: Command, ctx: CliContext): void {
  const command = program
    .command('fetch')
    .summary('download, verify and safely extract a bundle (the site chart init container)')
    .description(
      'Download a bundle (resuming after dropped connections), verify its size and content version, and ' +
        'extract it safely into --dest: the directory is replaced as a whole or left untouched. The site must ' +
        'have index.html at its root and at least --min-pages pages. --dest must be new, empty or extracted ' +
        'there before by static-export (it keeps a .static-export marker file there), and not a mount point ' +
        'itself (use a subdirectory of the volume). Files end up 0644 and directories 0755 whatever the ' +
        'umask, so a web server running as another user can read them.',
    )
    .option('--url <url>', 'bundle link (http/https) or file:// URL of a mirrored bundle.tar.gz')
    .option(
      '--oci <reference>',
      `pull the site image REGISTRY/REPOSITORY@sha256:DIGEST instead of a bundle (env ${ENV.ociReference})`,
    )
    .option(
      '--verify-key <pem>',
      'with --oci: refuse the image unless a cosign signature by this public key covers its digest',
    )
    .requiredOption('--dest <dir>', 'directory that receives the site')
    .option('--force', 'replace --dest even if it holds files static-export did not put there')
    .option(
      '--expect-version <version>',
      'refuse content of another version (sha256-<hex>)',
      contentVersionArg,
    )
    .option('--expected-size <bytes>', 'refuse an archive of another size', integer(1));
  siteGateOptions(command, '--dest')
    .option('--retries <n>', 'consecutive failed download attempts before giving up', integer(0), 5)
    .addOption(downloadTimeoutOption(ctx, '--timeout'));
  registryOptions(bundleLimitOptions(command))
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText(
      'after',
      `${BUNDLE_ENV_HELP}\n  ${ENV.ociReference}  site image to pull (when neither --url nor --oci is given)${REGISTRY_ENV_HELP}\n${EXIT_CODES_HELP}`,
    )
    .action((flags: FetchFlags) => runFetch(flags, ctx));
}
