import type { Command } from 'commander';
import { checkDestination } from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { BUNDLE_ENV_HELP, bundleUrlFrom, contentVersionArg, ENV, flagOrEnv, integer } from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';
import { REGISTRY_ENV_HELP } from '../registry-options.ts';
import { fetchSite, type SiteCheckFlags, siteCheckOptions, verifyKeyOption } from '../site-fetch.ts';

interface FetchFlags extends SiteCheckFlags {
  url?: string;
  oci?: string;
  dest: string;
  force?: boolean;
  expectVersion?: string;
  expectedSize?: number;
  json?: boolean;
}

async function runFetch(flags: FetchFlags, ctx: CliContext): Promise<void> {
  // The variable names a site image only when no --url names a bundle.
  const oci = flags.url === undefined ? flagOrEnv(flags.oci, ENV.ociReference, ctx) : flags.oci;
  if (oci !== undefined && flags.url !== undefined) {
    throw usageError('Give --url (a bundle) or --oci (a site image), not both.');
  }
  if (oci === undefined && flags.verifyKey !== undefined) {
    throw usageError('--verify-key checks a site image: use it with --oci.');
  }
  const out = new Reporter(ctx, flags.json === true);
  const source = oci === undefined ? { url: bundleUrlFrom(flags.url, ctx) } : { oci };
  await checkDestination('--dest', flags.dest, flags.force);
  const fetched = await fetchSite(
    {
      source,
      dest: flags.dest,
      ...(flags.force ? { force: true } : {}),
      ...(flags.expectVersion === undefined ? {} : { expectVersion: flags.expectVersion }),
      ...(flags.expectedSize === undefined ? {} : { expectedSize: flags.expectedSize }),
    },
    flags,
    ctx,
  );
  out.event('fetched', { ...fetched });
  const what = fetched.reference
    ? `${fetched.reference}${fetched.verified ? ' (signature verified)' : ''}: version`
    : 'version';
  out.info(
    `Fetched ${what} ${fetched.version} (${fetched.files} files, ${fetched.site.pages} pages, ${formatBytes(fetched.sizeBytes)}) into ${fetched.path}`,
  );
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
    );
  verifyKeyOption(command)
    .requiredOption('--dest <dir>', 'directory that receives the site')
    .option('--force', 'replace --dest even if it holds files static-export did not put there')
    .option(
      '--expect-version <version>',
      'refuse content of another version (sha256-<hex>)',
      contentVersionArg,
    )
    .option('--expected-size <bytes>', 'refuse an archive of another size', integer(1));
  siteCheckOptions(command, ctx, '--dest')
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText(
      'after',
      `${BUNDLE_ENV_HELP}\n  ${ENV.ociReference}  site image to pull (when neither --url nor --oci is given)${REGISTRY_ENV_HELP}\n${EXIT_CODES_HELP}`,
    )
    .action((flags: FetchFlags) => runFetch(flags, ctx));
}
