import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_CLI_API_REQUESTS_PER_MINUTE } from '../../api/request-limiter.ts';
import { formatDuration } from '../../crd/duration.ts';
import type { RegistryClient } from '../../oci/registry.ts';
import type { DomainResult, SyncEvent, SyncTarget } from '../../oci/sync.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../project.ts';
import {
  ALLOW_PRIVATE_FLAG,
  ALLOW_PRIVATE_HELP,
  type BundleLimitFlags,
  bundleLimitOptions,
  limitsFrom,
} from '../bundle-options.ts';
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
  readApiKey,
  startsGroup,
  waitTimeoutOption,
} from '../options.ts';
import { formatBytes, formatElapsed, Reporter } from '../output.ts';
import {
  REGISTRY_ENV_HELP,
  type RegistryFlags,
  registryClientFor,
  registryOptions,
} from '../registry-options.ts';
import { reportSigned, type SigningFlags, signingHook, signingOptions } from '../signing.ts';
import type { StartPlan } from '../start-plan.ts';

interface SyncFlags extends ApiFlags, RegistryFlags, BundleLimitFlags, SigningFlags {
  config: string;
  concurrency?: number;
  pollInterval?: number;
  apiRequestsPerMinute: number;
  timeout: number;
  startsFile?: string;
  startsGroup?: string;
  startsPerHour: number;
  allowPrivateBundleLinks?: boolean;
  json?: boolean;
}

const CONFIG_HELP = `
mirror.yaml:
  target: oci://registry.internal/docs   # each domain goes to <target>/<domain>
  tags: [latest]                         # moving tags (default: latest)
  keep: 5                                # newest versions kept per domain (default: all)
  concurrency: 4                         # domains at once (default 4)
  apiUrl: https://api.mintlify.com       # else --api-url or STATIC_EXPORT_API_URL
  domains:
    - docs.example.com
    - domain: api.example.com
      repository: oci://registry.internal/other/api
    - projectId: 6520f3a1b2c4d5e6f7a8b9c0      # the current API revision (instead of domain)
      basePath: /docs                            # optional: "", /docs or /documentation
The admin API key comes from --key-file or STATIC_EXPORT_API_KEY, never from the file.
A projectId site goes to <target>/<projectId>. The current revision allows 10 export starts per
organization and hour: the run starts at most what the starts its group (--starts-group) recorded in
--starts-file for the last hour leave of its share (--starts-per-hour); the other projectId sites
wait (exit 8), each told when its start is possible.`;

function describe(
  event: SyncEvent,
  name: string,
): { key: string; text: string; percent?: number } | undefined {
  switch (event.event) {
    case 'started':
      return { key: `${name}:started`, text: `${name}: export ${event.jobId} started` };
    case 'exporting':
      return {
        key: `${name}:${event.status}`,
        text: `${name}: export ${event.status}`,
        ...(event.progress === undefined ? {} : { percent: event.progress }),
      };
    case 'downloading': {
      const percent = event.total ? (event.received / event.total) * 100 : undefined;
      return {
        key: `${name}:download:${percent === undefined ? '' : Math.floor(percent / 25)}`,
        text: `${name}: downloading ${formatBytes(event.received)}`,
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

/** The fields that name a site in JSON lines: `domain`, or `projectId` (and `basePath`). */
const siteFields = (target: SyncTarget) => ({ ...target.site });

/** Says which sites of the current revision start this run and which wait for a start. */
function reportPlan(plan: StartPlan, out: Reporter): void {
  out.event('plan', {
    startsGroup: plan.group,
    startsUsed: plan.used,
    startsPerHour: plan.perHour,
    starting: plan.starting.map(siteFields),
    waiting: [...plan.waiting].map(([t, at]) => ({ ...siteFields(t), notBefore: at.toISOString() })),
  });
  out.info(
    `Export starts: group ${plan.group} made ${plan.used} of the ${plan.perHour} an hour its share allows in the last hour; ${plan.starting.length} ` +
      `projectId site(s) start now${plan.waiting.size ? `, ${plan.waiting.size} wait (${[...plan.waiting.keys()].map((t) => t.name).join(', ')})` : ''}`,
  );
}

async function runSync(flags: SyncFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const logger = cliLogger(ctx);
  const text = (await readFlagFile('--config', flags.config)).toString('utf8');
  const { parseSyncConfig, syncDomains, SyncExportFailed } = await import('../../oci/sync.ts');
  const { config, targets } = parseSyncConfig(text, flags.config);
  const [{ StartRecord, keyGroup }, { StartPlan, StartWaiting }, { linkDestinationsFor }] = await Promise.all(
    [import('../start-record.ts'), import('../start-plan.ts'), import('../../bundle/link-destination.ts')],
  );
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
    // The record is read (and proven writable) only for a run with sites of the current revision.
    const record = targets.some((t) => !('domain' in t.site))
      ? await StartRecord.open(
          flags.startsFile ?? join(dirname(flags.config), '.static-export-starts.json'),
          flags.startsGroup ?? keyGroup(await readApiKey(flags, ctx)),
          Date.now(),
          flags.startsPerHour,
        )
      : undefined;
    const plan = record && new StartPlan(targets, record, Date.now());
    if (plan) reportPlan(plan, out);
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
      // Where the platform's links may lead: the API's own host, public addresses, or anything with the opt-in.
      destinations: linkDestinationsFor(api.baseUrl, flags.allowPrivateBundleLinks === true),
      ...(hook ? { afterManifest: hook } : {}),
      ...(plan
        ? {
            start: (target) =>
              plan.start(target, (site) => api.startExport(site), {
                timeoutMs: flags.timeout,
                onBusy: (busy, delayMs) => {
                  out.event('busy', { ...siteFields(busy), retryInMs: delayMs });
                  out.info(
                    `${busy.name} already has an export queued or running (409): starting again in ${formatElapsed(delayMs)} ` +
                      `(waiting at most --timeout ${formatDuration(flags.timeout)})`,
                  );
                },
              }),
          }
        : {}),
      onEvent: (event, target) => {
        const { name } = target;
        if (event.event === 'failed') {
          const message = event.error instanceof Error ? event.error.message : String(event.error);
          if (event.error instanceof StartWaiting) {
            const { notBefore, reason } = event.error;
            out.event('waiting', {
              ...siteFields(target),
              notBefore: notBefore.toISOString(),
              reason,
              message,
            });
          } else {
            out.event('failed', { ...siteFields(target), message });
          }
          out.info(`${name}: ${event.error instanceof StartWaiting ? '' : 'failed: '}${message}`);
          return;
        }
        if (event.event !== 'downloading') out.event(event.event, { ...event });
        if (event.event === 'pushed' || event.event === 'unchanged') {
          out.info(
            event.event === 'pushed'
              ? `${name}: pushed ${event.version} (${event.uploaded} blob(s) uploaded) ${event.reference}`
              : `${name}: unchanged, ${event.version} already in the registry${event.moved.length ? ` (tagged ${event.moved.join(', ')})` : ''}`,
          );
        } else if (event.event === 'pruned') {
          out.info(`${name}: pruned ${event.tags.length} old version(s)`);
        } else {
          const line = describe(event, name);
          if (line) out.progress(line);
        }
      },
    });
  } finally {
    await api.close();
    for (const client of clients.values()) await (await client.catch(() => undefined))?.close();
  }
  const waiting = results.filter((r) => r.error instanceof StartWaiting);
  const failed = results.filter((r) => !r.ok && !waiting.includes(r));
  const pushed = results.filter((r) => r.pushed).length;
  const nextStart = waiting
    .map((r) => (r.error as InstanceType<typeof StartWaiting>).notBefore)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  out.event('summary', {
    domains: results.length,
    pushed,
    unchanged: results.filter((r) => r.ok && !r.pushed).length,
    failed: failed.length,
    waiting: waiting.length,
    ...(nextStart ? { nextStartAt: nextStart.toISOString() } : {}),
    uploaded: results.reduce((n, r) => n + (r.uploaded ?? 0), 0),
    pruned: results.reduce((n, r) => n + (r.pruned ?? 0), 0),
  });
  out.info(
    `Synced ${results.length} domain(s): ${pushed} pushed, ${results.length - pushed - failed.length - waiting.length} unchanged, ${failed.length} failed${
      waiting.length ? `, ${waiting.length} waiting for an export start` : ''
    }`,
  );
  if (failed.length > 0) {
    const first = failed[0] as DomainResult;
    const code = exitCodeOf(first, (e) => e instanceof SyncExportFailed);
    throw new CliError(
      code,
      `${failed.length} of ${results.length} domain(s) failed (${failed.map((f) => f.target.name).join(', ')}); first: ${
        first.error instanceof Error ? first.error.message : String(first.error)
      }${waiting.length ? `; ${waiting.length} wait for an export start` : ''}`,
    );
  }
  if (nextStart) {
    throw new CliError(
      EXIT.startLimit,
      `${waiting.length} of ${results.length} site(s) wait for an export start (${waiting.map((w) => w.target.name).join(', ')}): ` +
        `the platform allows ${EXPORT_STARTS_PER_HOUR} starts per organization and hour, this group ${flags.startsPerHour}; the next is possible at ${nextStart.toISOString()}: run again then.`,
    );
  }
}

export function registerMirrorSync(mirror: Command, ctx: CliContext): void {
  const command = mirror
    .command('sync')
    .summary('export many domains and push each new version to a registry')
    .description(
      "For each site of --config (a domain, or a projectId of the current API revision, started within the hour's " +
        `${EXPORT_STARTS_PER_HOUR} starts: see below): start an export, wait for it, download and verify the bundle, package it ` +
        'as an OCI image and push it, unless the repository has that version already (then nothing is ' +
        'uploaded); point the moving tags at it and prune versions beyond `keep`. Sites fail independently; ' +
        'the exit code is that of the first failure, else 8 when sites wait for an export start.',
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
    .addOption(
      waitTimeoutOption(
        ctx,
        'per site: give up on its export and download after this long (a wait for another export of its project included)',
      ),
    )
    .option(
      '--starts-file <file>',
      "record of the export starts made in the last hour, for mirror.yaml's projectId sites; runs sharing it " +
        'take turns through <file>.lock (default: .static-export-starts.json next to --config)',
    )
    .option(
      '--starts-group <name>',
      'the start budget group these starts count against, named like spec.startBudget.group (default: the admin ' +
        "key's digest, so a rotated key starts a new group: name one to keep counting across a rotation)",
      startsGroup,
    )
    .option(
      '--starts-per-hour <n>',
      `this group's share of the organization's ${EXPORT_STARTS_PER_HOUR} export starts an hour (split it between clusters and pipelines)`,
      integer(1, EXPORT_STARTS_PER_HOUR),
      EXPORT_STARTS_PER_HOUR,
    );
  apiOptions(command);
  signingOptions(registryOptions(command));
  bundleLimitOptions(command)
    .option(ALLOW_PRIVATE_FLAG, ALLOW_PRIVATE_HELP)
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText('after', `${CONFIG_HELP}\n${API_ENV_HELP}${REGISTRY_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: SyncFlags) => runSync(flags, ctx));
}
