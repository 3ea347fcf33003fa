import type { Command } from 'commander';
import {
  type BundleLimitFlags,
  bundleLimitOptions,
  checkDestination,
  DEFAULT_DOWNLOAD_TIMEOUT_S,
  DOWNLOAD_TIMEOUT_HELP,
  limitsFrom,
} from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP } from '../exit-codes.ts';
import { BUNDLE_ENV_HELP, bundleUrlFrom, cliLogger, contentVersionArg, integer } from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';
import { type SiteGateFlags, siteGate, siteGateOptions } from '../site-gate.ts';

interface FetchFlags extends SiteGateFlags, BundleLimitFlags {
  url?: string;
  dest: string;
  force?: boolean;
  expectVersion?: string;
  expectedSize?: number;
  retries: number;
  timeout: number;
  json?: boolean;
}

async function runFetch(flags: FetchFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const url = bundleUrlFrom(flags.url, ctx);
  await checkDestination('--dest', flags.dest, flags.force);
  // Loaded on demand so `--help` and usage errors stay cheap (see main.ts).
  const { fetchBundle } = await import('../../bundle/index.ts');
  const fetched = await fetchBundle({
    url,
    dest: flags.dest,
    ...(flags.force ? { force: true } : {}),
    ...(flags.expectVersion === undefined ? {} : { expectVersion: flags.expectVersion }),
    ...(flags.expectedSize === undefined ? {} : { expectedSize: flags.expectedSize }),
    limits: limitsFrom(flags),
    download: { retries: flags.retries, deadlineMs: flags.timeout * 1000 },
    gate: siteGate(flags, flags.dest),
    logger: cliLogger(ctx),
  });
  out.event('fetched', { ...fetched });
  out.info(
    `Fetched version ${fetched.version} (${fetched.files} files, ${fetched.site.pages} pages, ${formatBytes(fetched.sizeBytes)}) into ${fetched.path}`,
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
    .option('--timeout <s>', DOWNLOAD_TIMEOUT_HELP, integer(1), DEFAULT_DOWNLOAD_TIMEOUT_S);
  bundleLimitOptions(command)
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText('after', `${BUNDLE_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: FetchFlags) => runFetch(flags, ctx));
}
