import type { Command } from 'commander';
import {
  type BundleLimitFlags,
  bundleLimitOptions,
  DEFAULT_DOWNLOAD_TIMEOUT_S,
  DOWNLOAD_TIMEOUT_HELP,
  limitsFrom,
} from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP } from '../exit-codes.ts';
import { BUNDLE_ENV_HELP, bundleUrlFrom, checkDomain, cliLogger, integer } from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';

interface MirrorFlags extends BundleLimitFlags {
  url?: string;
  dir: string;
  domain: string;
  expectedSize?: number;
  timeout: number;
  json?: boolean;
}

async function runMirror(flags: MirrorFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const url = bundleUrlFrom(flags.url, ctx);
  const { mirrorBundle } = await import('../../bundle/index.ts');
  const mirrored = await mirrorBundle({
    url,
    dir: flags.dir,
    domain: flags.domain,
    ...(flags.expectedSize === undefined ? {} : { expectedSize: flags.expectedSize }),
    limits: limitsFrom(flags),
    download: { deadlineMs: flags.timeout * 1000 },
    logger: cliLogger(ctx),
  });
  out.event('mirrored', { ...mirrored });
  out.info(
    `Mirrored version ${mirrored.version} (${formatBytes(mirrored.sizeBytes)}) to ${mirrored.archivePath}`,
  );
}

export function registerMirror(program: Command, ctx: CliContext): void {
  const command = program
    .command('mirror')
    .summary('pull a bundle into a mirror directory to carry into an air-gapped site')
    .description(
      'Download and verify a bundle, then file it as <dir>/<domain>/<version>/bundle.tar.gz with a ' +
        'manifest.json (version, sha256, size, fetchedAt; never the link) and update <dir>/<domain>/index.json. ' +
        'Inside the air gap, serve the directory over HTTP or run `static-export fetch --url file://...`.',
    )
    .option('--url <url>', 'bundle link (http/https)')
    .requiredOption('--dir <dir>', 'mirror root directory')
    .requiredOption('--domain <host>', 'site the bundle belongs to, a bare host', checkDomain)
    .option('--expected-size <bytes>', 'refuse an archive of another size', integer(1))
    .option('--timeout <s>', DOWNLOAD_TIMEOUT_HELP, integer(1), DEFAULT_DOWNLOAD_TIMEOUT_S);
  bundleLimitOptions(command)
    .option('--json', 'a JSON line on stdout instead of human output')
    .addHelpText('after', `${BUNDLE_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: MirrorFlags) => runMirror(flags, ctx));
}
