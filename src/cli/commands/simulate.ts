import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { AdminKeyError } from '../../api/errors.ts';
import { validateAdminKey } from '../../api/keys.ts';
import { ProjectIdSchema } from '../../api/schemas.ts';
import type { Logger } from '../../log.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../project.ts';
import { parseFault } from '../../simulator/faults.ts';
import type { Simulator } from '../../simulator/index.ts';
import { EXPORT_PROGRESS_MODELS, type ExportProgressModel } from '../../simulator/progress.ts';
import { LINK_STYLES, type LinkStyle } from '../../simulator/signing.ts';
import { type CliContext, untilStopSignal } from '../context.ts';
import { EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { readFlagFile } from '../flag-file.ts';
import { watchKeyFile } from '../key-file-watch.ts';
import { cliLogger, durationOption, integer } from '../options.ts';

const API_REVISIONS = ['1', '2'] as const;

interface SimulateFlags {
  port: number;
  host: string;
  key?: string;
  keyFile?: string;
  publicUrl?: string;
  docs?: string;
  exportDuration?: number;
  exportProgress?: ExportProgressModel;
  linkTtl?: number;
  linkStyle?: LinkStyle;
  apiRevision: (typeof API_REVISIONS)[number];
  requestsPerMinute: number;
  organizationKey: string[];
  unknownProject: string[];
  countConflicts?: boolean;
  fault: string[];
  json?: boolean;
}

function collect(value: string, previous: string[]): string[] {
  // Parsed here so a bad spec is a usage error naming --fault, with the parser's explanation.
  try {
    parseFault(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return [...previous, value];
}

/** --organization-key: an admin key, checked as --key is. */
function collectKey(value: string, previous: string[]): string[] {
  try {
    return [...previous, validateAdminKey(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** --unknown-project: a well-formed project id, so it can be asked for at all. */
function collectProject(value: string, previous: string[]): string[] {
  if (!ProjectIdSchema.safeParse(value).success) {
    throw new InvalidArgumentError('expected a project id: 1 to 64 letters, digits, "_" or "-".');
  }
  return [...previous, value];
}

/** --public-url: an origin only, since bundle links are absolute paths on it. */
function publicOrigin(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash) {
    throw new InvalidArgumentError(
      'expected an http(s) origin without a path, such as http://static-export-simulator.docs.svc.',
    );
  }
  return url.origin;
}

/** What the simulator takes as its admin key: the platform's admin key form, any value. */
const SIMULATOR_KEY_RULE =
  'the simulator takes any key of the platform\'s admin key form: "mint_" and at least one more character, ' +
  'no whitespace, not a public assistant key ("mint_dsc_…"); give none to have one generated';

/** `key` if it is an admin key; else a usage error naming where it came from and the simulator's rule. */
function checkedKey(key: string, from: string): string {
  try {
    return validateAdminKey(key);
  } catch (error) {
    if (!(error instanceof AdminKeyError)) throw error;
    // validateAdminKey's advice is about the platform's dashboard; this key is the simulator's own.
    const whitespace = /\s/.test(key) ? ' (it holds whitespace, often a trailing line break)' : '';
    throw usageError(`${from}: not an admin key${whitespace}: ${SIMULATOR_KEY_RULE}.`);
  }
}

/** Errors of listening that a flag can fix, as a usage error naming it; undefined for others. */
function listenError(error: unknown, flags: SimulateFlags): Error | undefined {
  const address = `${flags.host}:${flags.port}`;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return usageError(
        `--port ${flags.port}: ${address} is already in use; stop what listens there or pick another port (0 picks a free one).`,
      );
    case 'EACCES':
      return usageError(
        `--port ${flags.port}: listening on ${address} is not permitted (ports below 1024 need privileges); pick another port.`,
      );
    case 'EADDRNOTAVAIL':
      return usageError(
        `--host ${flags.host}: no address of this machine; use 127.0.0.1, ::1 or an address it has.`,
      );
    default:
      return undefined;
  }
}

/** The key in the text of `keyFile` (a Secret's file may end in a newline). */
function keyInFile(keyFile: string, text: string): string {
  return checkedKey(text.replace(/\r?\n$/, ''), `--key-file ${keyFile}`);
}

/** The key from --key or --key-file (a Secret mounted as a file, so it never shows in a process list). */
async function adminKeyOf(flags: SimulateFlags): Promise<string | undefined> {
  if (flags.key !== undefined && flags.keyFile !== undefined) {
    throw usageError('--key and --key-file both name the admin key: give one of them.');
  }
  if (flags.keyFile === undefined)
    return flags.key === undefined ? undefined : checkedKey(flags.key, '--key');
  return keyInFile(flags.keyFile, (await readFlagFile('--key-file', flags.keyFile)).toString('utf8'));
}

/** A key file changed (a rotated Secret) takes effect at once; jobs and links survive it. */
function followKeyFile(sim: Simulator, keyFile: string, logger: Logger): () => void {
  return watchKeyFile({
    flag: '--key-file',
    path: keyFile,
    current: sim.adminKey,
    parse: (text) => keyInFile(keyFile, text),
    onKey: (key) => {
      sim.configure({ adminKey: key });
      logger.info({ keyFile }, 'the admin key changed: the new key is accepted, the one before no longer');
    },
    onRefused: (reason) => logger.warn(`${reason}; the admin key read before is still accepted`),
  });
}

/**
 * The command to suggest: from a clone (src/cli/main.ts) `static-export` is not on the PATH and the
 * machine's `node` may be older than the project's, so npm's script (silent: --json stays parseable).
 */
function invocation(): string {
  return process.argv[1]?.endsWith(join('src', 'cli', 'main.ts')) ? 'npm run -s cli --' : 'static-export';
}

async function runSimulate(flags: SimulateFlags, ctx: CliContext): Promise<void> {
  const { startSimulator } = await import('../../simulator/index.ts');
  const adminKey = await adminKeyOf(flags);
  const logger = cliLogger(ctx);
  const sim = await startSimulator({
    port: flags.port,
    host: flags.host,
    faults: flags.fault,
    logger,
    ...(adminKey === undefined ? {} : { adminKey }),
    ...(flags.publicUrl === undefined ? {} : { publicBaseUrl: flags.publicUrl }),
    ...(flags.docs === undefined ? {} : { docsDir: flags.docs }),
    ...(flags.exportDuration === undefined ? {} : { exportDurationMs: flags.exportDuration }),
    ...(flags.exportProgress === undefined ? {} : { exportProgress: flags.exportProgress }),
    ...(flags.linkTtl === undefined ? {} : { linkTtlSeconds: Math.round(flags.linkTtl / 1000) }),
    ...(flags.linkStyle === undefined ? {} : { linkStyle: flags.linkStyle }),
    apiRevision: flags.apiRevision === '2' ? 2 : 1,
    requestsPerMinute: flags.requestsPerMinute,
    organizationKeys: flags.organizationKey,
    unknownProjects: flags.unknownProject,
    conflictsCountTowardStartLimit: flags.countConflicts ?? false,
  }).catch((error: unknown) => {
    throw listenError(error, flags) ?? error;
  });
  // Printing the key is the point of this command: it is the simulator's own, not a vendor key. A
  // key read from a file stays there (in a cluster the output is the pod's log).
  const shownKey = flags.keyFile === undefined ? sim.adminKey : undefined;
  if (flags.json) {
    ctx.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, adminKey: shownKey })}\n`);
  } else {
    ctx.stdout.write(
      [
        `Admin API simulator listening on ${sim.baseUrl}`,
        ...(flags.publicUrl === undefined ? [] : [`Bundle links point at ${flags.publicUrl}`]),
        shownKey === undefined ? `Admin key: the one in ${flags.keyFile}` : `Admin key: ${shownKey}`,
        '',
        'Try:',
        `  export STATIC_EXPORT_API_URL=${sim.baseUrl} STATIC_EXPORT_API_KEY=${shownKey ?? `$(cat ${flags.keyFile})`}`,
        `  ${invocation()} export ${flags.apiRevision === '2' ? '--project-id 6520f3a1c9b1a20012ab34ce' : '--domain docs.example.com'} --out ./site --values-out values.yaml`,
        '',
        'Stop with Ctrl-C.',
        '',
      ].join('\n'),
    );
  }
  const stopFollowing = flags.keyFile === undefined ? undefined : followKeyFile(sim, flags.keyFile, logger);
  try {
    await untilStopSignal();
  } finally {
    stopFollowing?.();
    await sim.close();
  }
}

export function registerSimulate(program: Command, ctx: CliContext): void {
  program
    .command('simulate')
    .summary('run the embedded admin API simulator (no vendor account needed)')
    .description(
      'Serve the admin API contract locally: agent jobs, static export jobs, and signed expiring bundle ' +
        'links with HTTP Range, rendered from a Markdown docs folder. Prints the base URL and admin key, then ' +
        'runs until SIGINT/SIGTERM.',
    )
    .option('--port <port>', 'port to listen on (0 picks a free one)', integer(0), 0)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--key <key>', 'admin key to accept (mint_...); generated when absent')
    .option(
      '--key-file <file>',
      'file holding the admin key to accept (not printed; a changed file takes effect), e.g. a mounted Secret',
    )
    .option(
      '--public-url <url>',
      'origin bundle links name, when clients reach the simulator at another address (e.g. its Service: http://static-export-simulator.docs.svc)',
      publicOrigin,
    )
    .option('--docs <dir>', 'Markdown docs folder to export (default: the bundled sample docs)')
    .addOption(
      durationOption(ctx, '--export-duration <duration>', 'time an export job takes', {
        min: '0s',
        legacyUnit: 'ms',
      }),
    )
    .addOption(
      new Option(
        '--export-progress <model>',
        'how a running export reports progress: linear, stall (stays at 90 % for the last third), none (no progress field)',
      ).choices(EXPORT_PROGRESS_MODELS),
    )
    .addOption(
      durationOption(ctx, '--link-ttl <duration>', 'lifetime of bundle links (default 15m)', {
        min: '1s',
        legacyUnit: 's',
      }),
    )
    .addOption(
      new Option(
        '--link-style <style>',
        "where bundle links carry their signature: query (S3's query authentication), matrix (;sig=… parameters), path (segments before the file name)",
      ).choices(LINK_STYLES),
    )
    .addOption(
      new Option(
        '--api-revision <n>',
        "static export API to serve: 2 (the platform's current paths, by project id) or 1 (the contract's, by domain); the other's paths answer 404",
      )
        .choices(API_REVISIONS)
        .default('2'),
    )
    .option(
      '--requests-per-minute <n>',
      'admin API requests per key per minute before 429, like the vendor (0: no limit)',
      integer(0),
      100,
    )
    .option(
      '--organization-key <key>',
      `another admin key of the same organization (repeatable): accepted like --key, sharing the organization's ${EXPORT_STARTS_PER_HOUR} starts per hour`,
      collectKey,
      [],
    )
    .option(
      '--unknown-project <id>',
      "a project id that is not in the key's organization (repeatable): revision 2 answers its calls 404, a start's without a body",
      collectProject,
      [],
    )
    .option('--count-conflicts', 'revision 2: a start refused with 409 counts toward the hourly start limit')
    .option(
      '--fault <spec>',
      'inject faults, repeatable: endpoint[@project]:kind:rate[:times], e.g. bundle:503:0.3, download:truncate:0.5, ' +
        'status:delay=2000:1, status@6520f3a1c9b1a20012ab34ce:503:1 (endpoints: start, status, bundle, download, ' +
        "agent-create, agent-get, agent-message; @project: only that project's requests; " +
        'kinds: HTTP status (429: the per-minute limit), reset, delay=<ms>, malformed, truncate; on start: fail (the job ' +
        'fails), created=<5xx|reset> (the job is created, then that answer), a bad exported site: empty, noindex, pages=<n>)',
      collect,
      [],
    )
    .option('--json', 'print {"baseUrl","adminKey"} as one JSON line (no adminKey with --key-file)')
    .addHelpText('after', EXIT_CODES_HELP)
    .action((flags: SimulateFlags) => runSimulate(flags, ctx));
}
