import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { insecureApiBaseUrl } from '../../api/base-url-policy.ts';
import { DEFAULT_API_REQUESTS_PER_MINUTE } from '../../api/request-limiter.ts';
import { PLATFORM_API_BASE_URL, versionedBaseUrlRefusal } from '../../api-base-url.ts';
import { DEFAULT_BUNDLE_CACHE_ENTRIES } from '../../bundle/cache.ts';
import { isSshUrl, parseSshUrl } from '../../git/ssh-url.ts';
import { insecureGitUrl } from '../../git/url-policy.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../project.ts';
import { DEFAULT_TRIGGER_REQUESTS_PER_MINUTE } from '../../trigger/contract.ts';
import {
  ALLOW_PRIVATE_FLAG,
  ALLOW_PRIVATE_HELP,
  type BundleLimitFlags,
  bundleLimitOptions,
  byteSize,
  downloadTimeoutOption,
  limitsFrom,
} from '../bundle-options.ts';
import { type CliContext, untilStopSignal } from '../context.ts';
import { EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { durationOption, ENV, flagOrEnv, integer } from '../options.ts';

/** How long SIGTERM waits for in-flight reconciles; the chart's termination grace is longer. */
export const SHUTDOWN_DRAIN_MS = 25_000;

interface OperatorFlags extends BundleLimitFlags {
  downloadTimeout: number;
  allowPrivateBundleLinks?: boolean;
  kubeconfig?: string;
  namespaces?: string[];
  concurrency: number;
  metricsAddress?: { host: string; port: number };
  triggerAddress?: { host: string; port: number };
  triggerRequestsPerMinute: number;
  leaderElection: boolean;
  leaseNamespace?: string;
  leaseName: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  apiBaseUrl?: string;
  allowedApiBaseUrls?: string[];
  allowInsecureApiBaseUrl?: boolean;
  allowedGitUrls?: string[];
  allowInsecureGitUrl?: boolean;
  apiRequestsPerMinute: number;
  startBudgetPerHour: number;
  keyPrefix: string;
  workDir: string;
  bundleCacheEntries: number;
  /** Deprecated: the cache no longer keeps archives (warned about, otherwise ignored). */
  bundleCacheSize?: number;
  logLevel: string;
}

function hostPort(value: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(value);
  const port = Number(m?.[2]);
  if (!m || port > 65535)
    throw new InvalidArgumentError('expected host:port, e.g. 0.0.0.0:8080 (port 0 picks one).');
  return { host: m[1] || '0.0.0.0', port };
}

function httpUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new InvalidArgumentError(`expected an absolute http(s) URL such as ${PLATFORM_API_BASE_URL}.`);
  }
  return value;
}

function gitRepositoryUrl(value: string): string {
  if (!isSshUrl(value) && (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))) {
    throw new InvalidArgumentError(
      'expected the URL of a Git repository: https://github.com/acme/gitops.git, ssh://git@github.com/acme/gitops.git or git@github.com:acme/gitops.git (no password in it).',
    );
  }
  return value;
}

/** A comma-separated list, each entry checked by `parse`. */
const list = (parse: (v: string) => string) => (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parse);

async function runOperator(flags: OperatorFlags, ctx: CliContext): Promise<void> {
  // The old generation may grow by 30 % of what a full collection left before the next, not by
  // V8's factor of up to 4 picked from the allocation speed: in the operator benchmark's burst of
  // 3,000 releases the heap grew to 67-86 MB (1.8 times its live size); with this 58-60 MB and a
  // peak RSS of 136-138 MB against 162, for about twice the full collections (0.4-0.5 s of the main
  // thread; the operator's CPU 48-58 s against 50.5 s: docs/benchmarks/2026-11-22.md#operator-memory).
  // The operator only: others stream.
  setFlagsFromString('--heap-growing-percent=30');
  // Loaded on demand: the controllers pull in the Kubernetes client and the whole runtime.
  const { startOperator } = await import('../../controllers/manager.ts');
  const { createLogger } = await import('../../log.ts');
  const { runShutdown } = await import('../../runtime/shutdown.ts');
  if (flags.leaderElection && flags.renewDeadline >= flags.leaseDuration) {
    throw usageError('--renew-deadline must be shorter than --lease-duration.');
  }
  const metricsPort = flags.metricsAddress?.port ?? 8080;
  if (flags.triggerAddress && flags.triggerAddress.port !== 0 && flags.triggerAddress.port === metricsPort) {
    throw usageError(
      `--trigger-address must use another port than --metrics-address (both ${metricsPort}): the trigger receiver has its own port.`,
    );
  }
  const apiBaseUrl = flagOrEnv(flags.apiBaseUrl, ENV.apiUrl, ctx);
  // A base URL ending in /v1 would 404 every call, and keys go over plain http only to loopback
  // unless allowed: refuse such a URL before starting.
  const keyDestinations: [string, string | undefined][] = [
    ['--api-base-url', apiBaseUrl],
    ...(flags.allowedApiBaseUrls ?? []).map((u): [string, string] => ['--allowed-api-base-urls', u]),
  ];
  for (const [flag, url] of keyDestinations) {
    const versioned = url && versionedBaseUrlRefusal(url, flag);
    if (versioned) throw usageError(versioned);
    const insecure = url && insecureApiBaseUrl(url, flags.allowInsecureApiBaseUrl ?? false);
    if (insecure) throw usageError(`${flag}: ${insecure}. Use https, or add --allow-insecure-api-base-url.`);
  }
  for (const url of flags.allowedGitUrls ?? []) {
    // An SSH URL's user is no secret (git@), a password is.
    if (isSshUrl(url)) {
      if (!parseSshUrl(url))
        throw usageError(
          "--allowed-git-urls: an SSH entry is not ssh://user@host[:port]/path or user@host:path, or holds a password: list it without one; the key goes in the release's spec.gitWriteBack.secretRef Secret.",
        );
      continue;
    }
    // Checked here, not in the option's parser: commander's message would repeat the value.
    const u = new URL(url);
    if (u.username || u.password)
      throw usageError(
        "--allowed-git-urls: an entry holds credentials (user:token@): list the repository's URL without them; the token goes in the release's spec.gitWriteBack.secretRef Secret.",
      );
    const insecure = insecureGitUrl(url, flags.allowInsecureGitUrl ?? false);
    if (insecure)
      throw usageError(`--allowed-git-urls: ${insecure}. Use https, or add --allow-insecure-git-url.`);
  }
  const logger = createLogger({ level: flags.logLevel, name: 'static-export-operator' });
  if (flags.bundleCacheSize !== undefined) {
    logger.warn(
      '--bundle-cache-size has no effect and will be removed: the bundle cache keeps verification ' +
        'results, not archives. Remove it, and bound the cache with --bundle-cache-entries if needed.',
    );
  }
  mkdirSync(flags.workDir, { recursive: true });
  const operator = await startOperator({
    logger,
    namespaces: flags.namespaces ?? [],
    concurrency: flags.concurrency,
    metricsHost: flags.metricsAddress?.host ?? '0.0.0.0',
    metricsPort,
    ...(flags.triggerAddress
      ? { trigger: { ...flags.triggerAddress, requestsPerMinute: flags.triggerRequestsPerMinute } }
      : {}),
    keyPrefix: flags.keyPrefix,
    apiRequestsPerMinute: flags.apiRequestsPerMinute,
    startBudgetPerHour: flags.startBudgetPerHour,
    workDir: flags.workDir,
    bundleCacheEntries: flags.bundleCacheEntries,
    download: {
      limits: limitsFrom(flags),
      deadlineMs: flags.downloadTimeout,
      ...(flags.allowPrivateBundleLinks ? { allowPrivateLinks: true } : {}),
    },
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(apiBaseUrl ? { apiBaseUrl: httpUrl(apiBaseUrl) } : {}),
    ...(flags.allowedApiBaseUrls ? { allowedApiBaseUrls: flags.allowedApiBaseUrls } : {}),
    ...(flags.allowInsecureApiBaseUrl ? { allowInsecureApiBaseUrl: true } : {}),
    gitUrls: { allowed: flags.allowedGitUrls ?? [], allowInsecure: flags.allowInsecureGitUrl ?? false },
    ...(flags.leaderElection
      ? {
          leaderElection: {
            namespace: flagOrEnv(flags.leaseNamespace, ENV.podNamespace, ctx) ?? 'default',
            name: flags.leaseName,
            leaseDurationMs: flags.leaseDuration,
            renewDeadlineMs: flags.renewDeadline,
            retryPeriodMs: flags.retryPeriod,
          },
        }
      : {}),
  });
  try {
    await untilStopSignal();
  } finally {
    logger.info('shutting down');
    // Drains reconciles, releases the Lease, closes servers, within the pod's grace period.
    await runShutdown([{ name: 'operator', run: () => operator.stop() }], SHUTDOWN_DRAIN_MS, logger);
  }
}

export function registerOperator(program: Command, ctx: CliContext): void {
  const command = program
    .command('operator')
    .summary('run the StaticExportRelease and AgentJob controllers')
    .description(
      'Watch StaticExportRelease and AgentJob resources and reconcile them: run exports, publish bundle links ' +
        'into the target values, renew links before they expire, create agent jobs and report their pull ' +
        'requests. Uses the kubeconfig (or the in-cluster service account); one replica leads via a Lease.',
    )
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('--namespaces <list>', 'comma-separated namespaces to watch (default: all)', (v: string) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .option('--concurrency <n>', 'parallel reconciles per controller', integer(1), 4)
    .option(
      '--metrics-address <host:port>',
      'serves /metrics, /healthz and /readyz (default: 0.0.0.0:8080)',
      hostPort,
    )
    .option(
      '--trigger-address <host:port>',
      'serve the signed trigger receiver (POST /hooks/<namespace>/<name>) here, e.g. 0.0.0.0:8082 (default: off)',
      hostPort,
    )
    .option(
      '--trigger-requests-per-minute <n>',
      'trigger calls per release and minute; more get 429',
      integer(1),
      DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
    )
    .option('--no-leader-election', 'reconcile without taking the Lease (run a single replica only)')
    .option(
      '--lease-namespace <ns>',
      `namespace of the leader election Lease (default: ${ENV.podNamespace}, else default)`,
    )
    .option('--lease-name <name>', 'name of the leader election Lease', 'static-export-operator')
    .addOption(
      durationOption(
        ctx,
        '--lease-duration <duration>',
        'how long standbys wait before taking over an unrenewed Lease',
        {
          min: '2s',
          default: '15s',
          legacyUnit: 's',
        },
      ),
    )
    .addOption(
      durationOption(
        ctx,
        '--renew-deadline <duration>',
        'the leader stops reconciling when it could not renew for this long',
        { min: '1s', default: '10s', legacyUnit: 's' },
      ),
    )
    .addOption(
      durationOption(ctx, '--retry-period <duration>', 'how often to try to acquire or renew the Lease', {
        min: '1s',
        default: '2s',
        legacyUnit: 's',
      }),
    )
    .option(
      '--api-base-url <url>',
      `admin API base URL for resources without spec.apiBaseUrl (env ${ENV.apiUrl})`,
      httpUrl,
    )
    .option(
      '--allowed-api-base-urls <list>',
      'comma-separated further admin API base URLs a resource may name in spec.apiBaseUrl; keys are sent ' +
        'nowhere else (default: only --api-base-url)',
      list(httpUrl),
    )
    .option(
      '--allow-insecure-api-base-url',
      'allow sending admin keys over plain http to hosts other than loopback (http://127.0.0.1 is always allowed)',
    )
    .option(
      '--allowed-git-urls <list>',
      'comma-separated https:// or SSH URLs of the Git repositories releases may commit to (spec.gitWriteBack.url, ' +
        'compared without .git and trailing slashes, git@host:path as ssh://git@host/path); credentials are sent nowhere else (default: none, write-back off)',
      list(gitRepositoryUrl),
    )
    .option(
      '--allow-insecure-git-url',
      'allow --allowed-git-urls entries with plain http (loopback too): the token and commits travel unencrypted',
    )
    .option(
      '--api-requests-per-minute <n>',
      'admin API requests per key and minute at most; the platform allows about 100 (0: no limit)',
      integer(0),
      DEFAULT_API_REQUESTS_PER_MINUTE,
    )
    .option(
      '--start-budget-per-hour <n>',
      `export starts per hour of a start budget group (spec.projectId releases) whose releases name no ` +
        `spec.startBudget.startsPerHour: the organization's ${EXPORT_STARTS_PER_HOUR}, or this cluster's share ` +
        'when other clusters or pipelines start exports of the same organization',
      startsPerHour,
      EXPORT_STARTS_PER_HOUR,
    )
    .option('--key-prefix <prefix>', 'vendor prefix of admin API keys', 'mint')
    .option(
      '--work-dir <dir>',
      'where the bundle cache keeps its verification results (bundles themselves are verified as they ' +
        'stream and never written); one per running operator (cleaned at start)',
      join(tmpdir(), 'static-export-operator'),
    )
    .option(
      '--bundle-cache-entries <n>',
      'most bundle verification results kept, so releases sharing an export, and renewed links, do ' +
        'not download a bundle again (least recently used go first; a few hundred bytes each)',
      integer(0),
      DEFAULT_BUNDLE_CACHE_ENTRIES,
    )
    .addOption(new Option('--bundle-cache-size <size>').argParser(byteSize).hideHelp())
    .addOption(downloadTimeoutOption(ctx, '--download-timeout'))
    .option(ALLOW_PRIVATE_FLAG, ALLOW_PRIVATE_HELP);
  bundleLimitOptions(command)
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error'])
        .default('info'),
    )
    .addHelpText('after', EXIT_CODES_HELP)
    .action((flags: OperatorFlags) => runOperator(flags, ctx));
}

/** --start-budget-per-hour: a share of the organization's hour, from 1 to all of it. */
function startsPerHour(value: string): number {
  const n = integer(1)(value);
  if (n > EXPORT_STARTS_PER_HOUR)
    throw new InvalidArgumentError(
      `expected at most ${EXPORT_STARTS_PER_HOUR}: the platform allows ${EXPORT_STARTS_PER_HOUR} export starts per organization and hour.`,
    );
  return n;
}
