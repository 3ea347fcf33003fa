import type { Command } from 'commander';
import { DEFAULT_CLI_API_REQUESTS_PER_MINUTE } from '../../api/request-limiter.ts';
import type { RegistryClient } from '../../oci/registry.ts';
import type { DomainResult, SyncEvent } from '../../oci/sync.ts';
import { type BundleLimitFlags, bundleLimitOptions, limitsFrom } from '../bundle-options.ts';
import type { CliContext } from '../context.ts';
import { CliError, EXIT, EXIT_CODES_HELP, type ExitCode, exitCodeFor } from '../exit-codes.ts';
import { readFlagFile } from '../flag-file.ts';
import {
  API_ENV_HELP,
  type ApiFlags,
  apiClient,
  apiOptions,
  cliLogger,
  durationOption,
  integer,
  waitTimeoutOption,
} from '../options.ts';
import { formatBytes, Reporter } from '../output.ts';
import {
  REGISTRY_ENV_HELP,
  type RegistryFlags,
  registryClientFor,
  registryOptions,
} from '../registry-options.ts';
import { reportSigned, type SigningFlags, signingHook, signingOptions } from '../signing.ts';

interface SyncFlags extends ApiFlags, RegistryFlags, BundleLimitFlags, SigningFlags {
  config: string;
  concurrency?: number;
  pollInterval?: number;
  apiRequestsPerMinute: number;
  timeout: number;
  json?: boolean;
}

const CONFIG_HELP = `
mirror.yaml:
  target: oci://registry.internal/docs   # each domain goes to <target>/<domain>
  tags: [latest]                         # moving tags (default: latest)
  keep: 5                                # newest versions kept per domain (default: all)
  concurrency: 4                         # domains at once (default 4)
  apiUrl: https://api.example.com        # else --api-url or STATIC_EXPORT_API_URL
  domains:
    - docs.example.com
    - domain: api.example.com
      repository: oci://registry.internal/other/api
The admin API key comes from --key-file or STATIC_EXPORT_API_KEY, never from the file.`;

function describe(event: SyncEvent): { key: string; text: string; percent?: number } | undefined {
  switch (event.event) {
    case 'started':
      return { key: `${event.domain}:started`, text: `${event.domain}: export ${event.jobId} started` };
    case 'exporting':
      return {
        key: `${event.domain}:${event.status}`,
        text: `${event.domain}: export ${event.status}`,
        ...(event.progress === undefined ? {} : { percent: event.progress }),
      };
    case 'downloading': {
      const percent = event.total ? (event.received / event.total) * 100 : undefined;
      return {
        key: `${event.domain}:download:${percent === undefined ? '' : Math.floor(percent / 25)}`,
        text: `${event.domain}: downloading ${formatBytes(event.received)}`,
        ...(percent === undefined ? {} : { percent }),
      };
    }
    default:
      return undefined;
  }
}

function exitCodeOf(result: DomainResult, exportFailed: (e: unknown) => boolean): ExitCode {
  return exportFailed(result.error) ? EXIT.jobFailed : exitCodeFor(result.error);
}

async function runSync(flags: SyncFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const logger = cliLogger(ctx);
  const text = (await readFlagFile('--config', flags.config)).toString('utf8');
  const { parseSyncConfig, syncDomains, SyncExportFailed } = await import('../../oci/sync.ts');
  const { config, targets } = parseSyncConfig(text, flags.config);
  const hook = await signingHook(flags, (signed) => reportSigned(out, signed));
  const api = await apiClient(
    { ...flags, ...(flags.apiUrl === undefined && config.apiUrl ? { apiUrl: config.apiUrl } : {}) },
    ctx,
    logger,
    flags.apiRequestsPerMinute,
  );
  const clients = new Map<string, Promise<RegistryClient>>();
  const registry = (host: string): Promise<RegistryClient> => {
    let client = clients.get(host);
    if (!client) {
      client = registryClientFor({ registry: host, repository: 'x' }, flags, ctx);
      clients.set(host, client);
    }
    return client;
  };
  let results: DomainResult[];
  try {
    results = await syncDomains({
      api,
      registry,
      targets,
      tags: config.tags,
      ...(config.keep === undefined ? {} : { keep: config.keep }),
      concurrency: flags.concurrency ?? config.concurrency,
      ...(flags.pollInterval === undefined ? {} : { pollIntervalMs: flags.pollInterval }),
      timeoutMs: flags.timeout,
      limits: limitsFrom(flags),
      ...(hook ? { afterManifest: hook } : {}),
      onEvent: (event) => {
        if (event.event === 'failed') {
          const message = event.error instanceof Error ? event.error.message : String(event.error);
          out.event('failed', { domain: event.domain, message });
          out.info(`${event.domain}: failed: ${message}`);
          return;
        }
        if (event.event !== 'downloading') out.event(event.event, { ...event });
        if (event.event === 'pushed' || event.event === 'unchanged') {
          out.info(
            event.event === 'pushed'
              ? `${event.domain}: pushed ${event.version} (${event.uploaded} blob(s) uploaded) ${event.reference}`
              : `${event.domain}: unchanged, ${event.version} already in the registry${event.moved.length ? ` (tagged ${event.moved.join(', ')})` : ''}`,
          );
        } else if (event.event === 'pruned') {
          out.info(`${event.domain}: pruned ${event.tags.length} old version(s)`);
        } else {
          const line = describe(event);
          if (line) out.progress(line);
        }
      },
    });
  } finally {
    await api.close();
    for (const client of clients.values()) await (await client.catch(() => undefined))?.close();
  }
  const failed = results.filter((r) => !r.ok);
  const pushed = results.filter((r) => r.pushed).length;
  out.event('summary', {
    domains: results.length,
    pushed,
    unchanged: results.filter((r) => r.ok && !r.pushed).length,
    failed: failed.length,
    uploaded: results.reduce((n, r) => n + (r.uploaded ?? 0), 0),
    pruned: results.reduce((n, r) => n + (r.pruned ?? 0), 0),
  });
  out.info(
    `Synced ${results.length} domain(s): ${pushed} pushed, ${results.length - pushed - failed.length} unchanged, ${failed.length} failed`,
  );
  if (failed.length > 0) {
    const first = failed[0] as DomainResult;
    const code = exitCodeOf(first, (e) => e instanceof SyncExportFailed);
    throw new CliError(
      code,
      `${failed.length} of ${results.length} domain(s) failed (${failed.map((f) => f.domain).join(', ')}); first: ${
        first.error instanceof Error ? first.error.message : String(first.error)
      }`,
    );
  }
}

export function registerMirrorSync(mirror: Command, ctx: CliContext): void {
  const command = mirror
    .command('sync')
    .summary('export many domains and push each new version to a registry')
    .description(
      'For each domain of --config: start an export, wait for it, download and verify the bundle, package it ' +
        'as an OCI image and push it, unless the repository has that version already (then nothing is ' +
        'uploaded); point the moving tags at it and prune versions beyond `keep`. Domains fail independently; ' +
        'the exit code is that of the first failure.',
    )
    .requiredOption('--config <file>', 'mirror.yaml (see below)')
    .option('--concurrency <n>', 'domains at once (overrides the file)', integer(1))
    .addOption(
      durationOption(
        ctx,
        '--poll-interval <duration>',
        "poll each export's status at this fixed interval instead of by progress (by default the operator's " +
          'schedule: a first look after a second, then at the end progress points to, at least once a minute)',
        { min: '100ms', legacyUnit: 'ms' },
      ),
    )
    .option(
      '--api-requests-per-minute <n>',
      `admin API requests a minute at most, all domains together (every release and tool using the key shares the platform's ~100; 0: no limit)`,
      integer(0),
      DEFAULT_CLI_API_REQUESTS_PER_MINUTE,
    )
    .addOption(waitTimeoutOption(ctx, 'per domain: give up on its export and download after this long'));
  apiOptions(command);
  signingOptions(registryOptions(command));
  bundleLimitOptions(command)
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText('after', `${CONFIG_HELP}\n${API_ENV_HELP}${REGISTRY_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: SyncFlags) => runSync(flags, ctx));
}
