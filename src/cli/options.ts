import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AdminApiClient } from '../api/index.ts';
import { PLATFORM_API_BASE_URL, versionedBaseUrlRefusal } from '../api-base-url.ts';
import { isContentVersion } from '../bundle/version.ts';
import { formatDuration, parseDuration } from '../crd/duration.ts';
import { BARE_HOST_RULE, isBareHost } from '../domain.ts';
import { createLogger, type Logger } from '../log.ts';
import { START_BUDGET_GROUP_MAX_LENGTH, START_BUDGET_GROUP_PATTERN } from '../project.ts';
import { registerSecret } from '../redact.ts';
import type { CliContext } from './context.ts';
import { CliError, EXIT, usageError } from './exit-codes.ts';
import { readFlagFile } from './flag-file.ts';

export const ENV = {
  apiUrl: 'STATIC_EXPORT_API_URL',
  apiKey: 'STATIC_EXPORT_API_KEY',
  projectId: 'STATIC_EXPORT_PROJECT_ID',
  bundleUrl: 'STATIC_EXPORT_BUNDLE_URL',
  ociReference: 'STATIC_EXPORT_OCI_REFERENCE',
  logLevel: 'STATIC_EXPORT_LOG_LEVEL',
  /** The pod's namespace and name, from the downward API (the charts set them). */
  podNamespace: 'POD_NAMESPACE',
  podName: 'POD_NAME',
} as const;

/**
 * A flag's value, else its environment variable's (a link stays out of process listings, a pod
 * learns its namespace). An empty variable counts as unset: a chart's optional Secret key gives one.
 * Read from `ctx.env`, not through commander's Option.env(), which reads process.env and counts a
 * variable as given where commands let another flag (--oci, --bundle) or mirror.yaml win over it.
 */
export function flagOrEnv(flag: string | undefined, variable: string, ctx: CliContext): string | undefined {
  return flag ?? (ctx.env[variable] || undefined);
}

/** commander argument parser for integers; commander names the flag in its error message. */
export function integer(min: number, max?: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min || (max !== undefined && Number(value) > max)) {
      throw new InvalidArgumentError(
        max === undefined
          ? `expected a whole number >= ${min}.`
          : `expected a whole number from ${min} to ${max}.`,
      );
    }
    return Number(value);
  };
}

/** --starts-group: the names spec.startBudget.group takes (the CRD's pattern). */
export function startsGroup(value: string): string {
  if (value.length > START_BUDGET_GROUP_MAX_LENGTH || !new RegExp(START_BUDGET_GROUP_PATTERN).test(value)) {
    throw new InvalidArgumentError(
      'expected a lowercase name (letters, digits and "-", at most 63), like spec.startBudget.group: e.g. docs-pipeline.',
    );
  }
  return value;
}

interface DurationFlag {
  /** The least accepted, e.g. "1s". */
  min: string;
  /** The default, e.g. "30m" (undefined: none). */
  default?: string;
  /** What a bare number meant before durations had units: still taken, with a deprecation warning. */
  legacyUnit?: 'ms' | 's';
}

/**
 * A duration flag in the CRDs' syntax (500ms, 10s, 2m30s, 24h), parsed to milliseconds. `flags` is
 * commander's, e.g. '--timeout <duration>'.
 */
export function durationOption(ctx: CliContext, flags: string, description: string, d: DurationFlag): Option {
  const name = flags.split(' ')[0] ?? flags;
  const minMs = parseDuration(d.min) ?? 0;
  const option = new Option(flags, description).argParser((value: string) => {
    const text = value.trim();
    let ms = parseDuration(text);
    if (ms === undefined && d.legacyUnit && /^\d+$/.test(text)) {
      ms = Number(text) * (d.legacyUnit === 's' ? 1000 : 1);
      ctx.stderr.write(
        `warning: ${name} ${text} is read as ${d.legacyUnit === 's' ? 'seconds' : 'milliseconds'}; a number without a unit is deprecated and will be refused in the next minor version: write ${name} ${formatDuration(ms)}\n`,
      );
    }
    if (ms === undefined)
      throw new InvalidArgumentError(
        'expected a duration such as 500ms, 10s, 2m30s or 24h (units h, m, s, ms).',
      );
    if (ms < minMs) throw new InvalidArgumentError(`expected at least ${d.min}.`);
    return ms;
  });
  return d.default === undefined ? option : option.default(parseDuration(d.default), d.default);
}

/** --poll-interval: a fixed time between status polls (default 2s). */
export const pollIntervalOption = (ctx: CliContext, description: string): Option =>
  durationOption(ctx, '--poll-interval <duration>', description, {
    min: '100ms',
    default: '2s',
    legacyUnit: 'ms',
  });

/** --timeout of a command that waits on the platform (default 30m). */
export const waitTimeoutOption = (ctx: CliContext, description: string): Option =>
  durationOption(ctx, '--timeout <duration>', description, { min: '1s', default: '30m', legacyUnit: 's' });

export interface ApiFlags {
  apiUrl?: string;
  keyFile?: string;
}

/** Adds --api-url and --key-file, shared by every command that calls the admin API. */
export function apiOptions(command: Command): Command {
  return command
    .option('--api-url <url>', `admin API base URL, e.g. ${PLATFORM_API_BASE_URL} (env ${ENV.apiUrl})`)
    .option('--key-file <file>', `file holding the admin API key (else env ${ENV.apiKey})`);
}

export const API_ENV_HELP = `
Environment:
  ${ENV.apiUrl}  admin API base URL (when --api-url is not given)
  ${ENV.apiKey}  admin API key (when --key-file is not given)
  STATIC_EXPORT_LOG_LEVEL  diagnostic log level on stderr: trace, debug, info, warn (default), error`;

/** An absolute URL with one of `protocols` that parses (a port over 65535 does not), with a host for http(s). */
function isUrl(value: string, protocols: string[]): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return protocols.includes(url.protocol) && (url.protocol === 'file:' || url.hostname !== '');
}

function resolveApiUrl(flags: ApiFlags, ctx: CliContext): string {
  const url = flagOrEnv(flags.apiUrl, ENV.apiUrl, ctx);
  if (!url) {
    throw usageError(
      `--api-url is required (or set ${ENV.apiUrl}): the vendor's admin API base URL. ` +
        'To try things without an account, run `static-export simulate` and use the URL it prints.',
    );
  }
  if (!isUrl(url, ['http:', 'https:'])) {
    throw usageError(`--api-url must be an http(s) URL such as ${PLATFORM_API_BASE_URL}, got "${url}".`);
  }
  const versioned = versionedBaseUrlRefusal(url, '--api-url');
  if (versioned) throw usageError(versioned);
  return url;
}

/** The admin key of --key-file, else of the environment. */
export async function readApiKey(flags: ApiFlags, ctx: CliContext): Promise<string> {
  if (flags.keyFile !== undefined) {
    const text = (await readFlagFile('--key-file', flags.keyFile)).toString('utf8');
    // Files written with `echo` end with a newline; anything else inside is left for key validation.
    return text.replace(/\r?\n$/, '');
  }
  const key = ctx.env[ENV.apiKey];
  if (!key) {
    // A missing key is an authentication problem (exit 3), like a malformed one.
    throw new CliError(
      EXIT.auth,
      `No admin API key: pass --key-file <file> or set ${ENV.apiKey} (keys are generated on the API keys page of the dashboard).`,
    );
  }
  return key;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * The CLI's diagnostic log level from STATIC_EXPORT_LOG_LEVEL (any case; default warn). A bare
 * LOG_LEVEL, which the CLI read before, is still taken with a deprecation warning.
 */
export function cliLogger(ctx: CliContext): Logger {
  const own = ctx.env[ENV.logLevel];
  const [name, raw] = own === undefined ? ['LOG_LEVEL', ctx.env.LOG_LEVEL] : [ENV.logLevel, own];
  if (own === undefined && raw !== undefined)
    ctx.stderr.write(
      `warning: LOG_LEVEL is deprecated and will be ignored in the next minor version: set ${ENV.logLevel}\n`,
    );
  const level = (raw ?? 'warn').trim().toLowerCase();
  if (!LOG_LEVELS.includes(level))
    throw usageError(`${name}=${raw?.slice(0, 40)} is not a log level: use one of ${LOG_LEVELS.join(', ')}.`);
  return createLogger({ name: 'static-export', level });
}

/** `requestsPerMinute`: at most this many admin requests a minute (waiting for a slot); 0 or absent: no limit. */
export async function apiClient(
  flags: ApiFlags,
  ctx: CliContext,
  logger: Logger,
  requestsPerMinute?: number,
): Promise<AdminApiClient> {
  const baseUrl = resolveApiUrl(flags, ctx);
  const apiKey = await readApiKey(flags, ctx);
  // Loaded on demand: commands that never call the API (fetch, mirror) skip zod and the client.
  const { AdminApiClient } = await import('../api/index.ts');
  // Key form problems throw AdminKeyError (exit 3) without quoting the key.
  return new AdminApiClient({ baseUrl, apiKey, logger, ...(requestsPerMinute ? { requestsPerMinute } : {}) });
}

/** The API wants a bare host (src/domain.ts); upper case is accepted here and lowered. */
export function checkDomain(value: string): string {
  const host = value.toLowerCase();
  if (!isBareHost(host)) throw new InvalidArgumentError(`expected ${BARE_HOST_RULE}.`);
  return host;
}

/** A bundle URL from a flag or the environment (keeps the presigned link out of process listings). */
export function bundleUrlFrom(flag: string | undefined, ctx: CliContext): string {
  const url = flagOrEnv(flag, ENV.bundleUrl, ctx);
  if (!url) {
    throw usageError(
      `--url is required (or set ${ENV.bundleUrl}, which keeps the link out of process listings).`,
    );
  }
  // Never quoted: the link is a credential.
  if (!isUrl(url, ['http:', 'https:', 'file:'])) {
    throw usageError(
      '--url must be a valid http(s) bundle link or a file:// URL of a mirrored bundle.tar.gz (check the host and port).',
    );
  }
  // A link is a credential wherever its signature sits (query, path, matrix parameters): scrub
  // removes it from whatever may print it later (an error, a log line).
  if (!url.startsWith('file:')) registerSecret(url);
  return url;
}

export const BUNDLE_ENV_HELP = `
Environment:
  ${ENV.bundleUrl}  bundle link (when --url is not given; keeps it out of process listings)
  STATIC_EXPORT_LOG_LEVEL    diagnostic log level on stderr: trace, debug, info, warn (default), error`;

/** commander argument parser refusing empty or blank values. */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}

/** commander argument parser for content versions as printed by export/fetch. */
export function contentVersionArg(value: string): string {
  if (!isContentVersion(value))
    throw new InvalidArgumentError('expected a content version like sha256-<64 hex digits>.');
  return value;
}
