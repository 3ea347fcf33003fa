import { randomUUID } from 'node:crypto';
import { type Command, InvalidArgumentError, type Option } from 'commander';
import { formatDuration } from '../../crd/duration.ts';
import { connectionFailure } from '../../http.ts';
import { registerSecret } from '../../redact.ts';
import {
  HOOK_PATH_PREFIX,
  MAX_CLOCK_SKEW_S,
  normalizeToken,
  SIGNATURE_HEADER,
  sign,
  TIMESTAMP_HEADER,
} from '../../trigger/contract.ts';
import type { CliContext } from '../context.ts';
import { CliError, EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { readFlagFile } from '../flag-file.ts';
import { cliKubeClient, KUBECONFIG_HELP, type KubeFlags } from '../kube.ts';
import { durationOption } from '../options.ts';
import { Reporter } from '../output.ts';
import { getRelease } from '../release-reader.ts';
import { type ReleaseRef, releaseRef } from '../release-ref.ts';
import { waitForTriggeredExport } from '../trigger-wait.ts';

const TRIGGER_TOKEN_ENV = 'STATIC_EXPORT_TRIGGER_TOKEN';

interface TriggerFlags extends KubeFlags {
  url: string;
  tokenFile?: string;
  timeout: number;
  /** How long to wait for the export to be published (ms); undefined: return at the 202. */
  wait?: number;
  json?: boolean;
}

function receiverUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new InvalidArgumentError(
      "expected the receiver's http(s) base URL, e.g. http://static-export-operator-trigger.static-export-system:8082.",
    );
  }
  return value;
}

async function readToken(flags: TriggerFlags, ctx: CliContext): Promise<string> {
  let raw: string | undefined;
  let from: string;
  if (flags.tokenFile !== undefined) {
    from = `--token-file ${flags.tokenFile}`;
    raw = (await readFlagFile('--token-file', flags.tokenFile)).toString('utf8');
  } else {
    from = TRIGGER_TOKEN_ENV;
    raw = ctx.env[TRIGGER_TOKEN_ENV];
    if (raw === undefined) {
      throw usageError(
        `No token: pass --token-file <file> or set ${TRIGGER_TOKEN_ENV} (the value in the Secret the release names in spec.trigger.tokenSecretRef).`,
      );
    }
  }
  const token = normalizeToken(raw);
  if (!token) throw usageError(`${from} holds no token (it is empty).`);
  registerSecret(token);
  return token;
}

/** The receiver's answer as an exit code and a message that says what to do. */
function refusal(status: number, key: string, said: string, retryAfter: string | null): CliError {
  const why = said ? `: ${said}` : '';
  switch (status) {
    case 401:
      return new CliError(
        EXIT.auth,
        `the receiver refused the call for ${key}${why}. Check that the token is the one in the Secret named by the release's spec.trigger.tokenSecretRef and that this machine's clock is within ${MAX_CLOCK_SKEW_S / 60} minutes of the cluster's.`,
      );
    case 404:
      return usageError(
        `the receiver knows no release ${key} that accepts triggers${why}. Check the namespace and name, that the release sets spec.trigger, and that the operator watches its namespace.`,
      );
    case 413:
      return usageError(`the receiver refused the call for ${key} as too large${why}.`);
    case 429:
      return new CliError(
        EXIT.unavailable,
        `rate limited by the receiver${retryAfter ? `; retry after ${retryAfter} s` : ''}${why}.`,
      );
    default:
      return status >= 500
        ? new CliError(EXIT.unavailable, `the receiver failed (HTTP ${status})${why}.`)
        : usageError(`HTTP ${status} from --url${why}: is it the operator's trigger receiver?`);
  }
}

async function runTrigger(ref: ReleaseRef, flags: TriggerFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const token = await readToken(flags, ctx);
  const key = `${ref.namespace}/${ref.name}`;
  if (flags.wait === undefined) {
    const requestedAt = await callReceiver(ref, flags, token);
    if (out.mode === 'json') out.event('triggered', { release: key, requestedAt });
    else out.resultLines([`Export requested for ${key}${requestedAt ? ` at ${requestedAt}` : ''}.`]);
    return;
  }
  const kube = await cliKubeClient(flags, ctx);
  try {
    // The cluster is read before anything is asked: no access or no such release fails before an
    // export starts that nobody could wait for.
    await getRelease(kube, ref);
    const requestedAt = await callReceiver(ref, flags, token);
    if (requestedAt === undefined)
      throw new CliError(
        EXIT.unexpected,
        `the receiver at ${flags.url} accepted the call without saying when (no requestedAt): nothing to wait for.`,
      );
    out.event('triggered', { release: key, requestedAt });
    out.info(`Export requested for ${key} at ${requestedAt}; waiting until it is published.`);
    const version = await waitForTriggeredExport({ kube, ref, requestedAt, timeoutMs: flags.wait, out });
    if (out.mode === 'json') out.event('published', { release: key, requestedAt, version });
    else out.resultLines([`Published ${version} for ${key}.`]);
  } finally {
    await kube.close();
  }
}

/** The signed call; the receiver's requestedAt on 202 (it has set the annotation). */
async function callReceiver(
  ref: ReleaseRef,
  flags: TriggerFlags,
  token: string,
): Promise<string | undefined> {
  const key = `${ref.namespace}/${ref.name}`;
  const base = flags.url.endsWith('/') ? flags.url : `${flags.url}/`;
  const url = new URL(`${HOOK_PATH_PREFIX.slice(1)}${ref.namespace}/${ref.name}`, base);
  // A fresh id per call: two calls in the same second are two calls, not a replay of one.
  const body = Buffer.from(JSON.stringify({ release: key, id: randomUUID() }));
  const timestamp = String(Math.floor(Date.now() / 1000));
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: sign(token, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(flags.timeout),
    });
  } catch (error) {
    const why =
      (error as Error).name === 'TimeoutError'
        ? `did not answer within ${formatDuration(flags.timeout)} (--timeout)`
        : connectionFailure(error);
    throw new CliError(EXIT.unavailable, `the receiver at ${url.origin} ${why}.`);
  }
  const text = await answerText(res).catch(() => '');
  let answer: { message?: string; requestedAt?: string } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not our receiver, or a proxy's page: the status says enough.
  }
  if (res.status !== 202 && res.status !== 200) {
    throw refusal(res.status, key, answer.message ?? '', res.headers.get('retry-after'));
  }
  return answer.requestedAt;
}

/** The receiver answers a line of JSON; a larger answer is not its own and is left unread. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The answer's text, or '' past MAX_ANSWER_BYTES (leaving the loop cancels the body). */
async function answerText(res: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) return '';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * --wait[=<duration>]: its value is optional, so `--wait docs/docs` would take the release as the
 * duration; that case gets an error saying how to write it.
 */
function waitOption(ctx: CliContext): Option {
  const option = durationOption(
    ctx,
    '--wait [duration]',
    'after the 202, wait until the requested export is published or failed, at most this long (default 30m); needs read access to the release (--kubeconfig)',
    { min: '1s' },
  ).preset('30m');
  const parseDuration = option.parseArg as (value: string, previous: unknown) => number;
  return option.argParser((value: string, previous: unknown) => {
    if (value.includes('/'))
      throw new InvalidArgumentError(
        `"${value}" is the release, not a duration: write --wait=<duration>, or put --wait after the release.`,
      );
    return parseDuration(value, previous);
  });
}

export function registerTrigger(program: Command, ctx: CliContext): void {
  program
    .command('trigger')
    .summary('ask the operator for an export now, through its signed trigger receiver')
    .description(
      "Sign a call with the release's trigger token and send it to the operator's trigger receiver " +
        "(operator --trigger-address; the chart's trigger Service): the release exports now, as with " +
        'the staticexport.dev/requested-at annotation, without any cluster credentials. The release must ' +
        'set spec.trigger.tokenSecretRef. With --wait it then reads the release through the Kubernetes API ' +
        'until the export it asked for is published (exit 0, printing the version) or failed (exit 4 with the ' +
        "release's reason and message). Exit 3 when the signature is refused (wrong token or clock), 2 for an " +
        'unknown release, 6 when rate limited, the receiver is unreachable or --wait runs out.',
    )
    .argument('<namespace/name>', 'the StaticExportRelease, e.g. docs/docs', releaseRef)
    .requiredOption(
      '--url <url>',
      "the receiver's base URL (the path /hooks/<namespace>/<name> is added)",
      receiverUrl,
    )
    .option('--token-file <file>', `file holding the release's trigger token (else env ${TRIGGER_TOKEN_ENV})`)
    .addOption(
      durationOption(ctx, '--timeout <duration>', 'give up on the call to the receiver after this long', {
        min: '1s',
        default: '30s',
        legacyUnit: 's',
      }),
    )
    .addOption(waitOption(ctx))
    .option('--kubeconfig <file>', `with --wait: kubeconfig file ${KUBECONFIG_HELP}`)
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText(
      'after',
      `\nEnvironment:\n  ${TRIGGER_TOKEN_ENV}  the trigger token (when --token-file is not given)\n${EXIT_CODES_HELP}`,
    )
    .action((ref: ReleaseRef, flags: TriggerFlags) => runTrigger(ref, flags, ctx));
}
