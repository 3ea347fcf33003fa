import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP } from '../exit-codes.ts';
import { BUNDLE_ENV_HELP, bundleUrlFrom, cliLogger, contentVersionArg, integer } from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';
import { type SiteGateFlags, siteGate, siteGateOptions } from '../site-gate.ts';

interface FetchFlags extends SiteGateFlags {
  url?: string;
  dest: string;
  expectVersion?: string;
  expectedSize?: number;
  retries: number;
  json?: boolean;
}

async function runFetch(flags: FetchFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const url = bundleUrlFrom(flags.url, ctx);
  // Loaded on demand so `--help` and usage errors stay cheap (see main.ts).
  const { fetchBundle } = await import('../../bundle/index.ts');
  const fetched = await fetchBundle({
    url,
    dest: flags.dest,
    ...(flags.expectVersion === undefined ? {} : { expectVersion: flags.expectVersion }),
    ...(flags.expectedSize === undefined ? {} : { expectedSize: flags.expectedSize }),
    download: { retries: flags.retries },
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
        'have index.html at its root and at least --min-pages pages. --dest must not be a mount point itself ' +
        '(use a subdirectory of the volume).',
    )
    .option('--url <url>', 'bundle link (http/https) or file:// URL of a mirrored bundle.tar.gz')
    .requiredOption('--dest <dir>', 'directory that receives the site')
    .option(
      '--expect-version <version>',
      'refuse content of another version (sha256-<hex>)',
      contentVersionArg,
    )
    .option('--expected-size <bytes>', 'refuse an archive of another size', integer(1));
  siteGateOptions(command, '--dest')
    .option('--retries <n>', 'consecutive failed download attempts before giving up', integer(0), 5)
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText('after', `${BUNDLE_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: FetchFlags) => runFetch(flags, ctx));
}
