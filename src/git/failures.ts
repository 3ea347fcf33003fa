// What a failed fetch or push means for the user, as a GitFailure: isomorphic-git's errors (HTTP
// status, push reports, protocol parse errors) and the network's. Messages name the repository by
// origin and path only and never quote a response body. Server text is read only through a
// Redact (echoed-credentials.ts), which bounds it before anything else looks at it: every parse
// of it here is linear in that bound.
import { Errors } from 'isomorphic-git';
import { connectionFailure, errorCode, HttpTimeoutError } from '../http.ts';
import { terminalSafe } from '../terminal-text.ts';
import type { Redact } from './echoed-credentials.ts';
import { GitFailure } from './types.ts';

/** Longest server reason (a pre-receive hook's first line) quoted in a message. */
const MAX_REASON = 200;
/** The most of one server line (or ref report) read: git's own lines are far shorter. */
export const MAX_SERVER_LINE = 1024;

const noSecrets: Redact = (text, max) => text.slice(0, max);

/**
 * A server's one-line reason: the first non-empty line, redacted (before it is cut), control
 * characters escaped, truncated.
 */
export function serverReason(lines: string[], redact: Redact = noSecrets): string | undefined {
  for (const raw of lines) {
    // Control characters (a terminal escape, a forged line) show as visible \uXXXX escapes.
    const line = terminalSafe(
      redact(raw, MAX_SERVER_LINE)
        .trim()
        .replace(/[ \t]+/g, ' '),
    );
    if (line === '') continue;
    return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON - 1)}…` : line;
  }
  return undefined;
}

const LOCK = 'cannot lock ref ';
const IS_AT = ' is at ';
const BUT_EXPECTED = ' but expected ';

/** The length of the run of hex digits at `from`. */
function hexRun(text: string, from: number): number {
  let i = from;
  while (i < text.length && /[0-9a-f]/.test(text[i] as string)) i++;
  return i - from;
}

/**
 * `cannot lock ref … is at X but expected Y` (git's words when the ref moved under the update),
 * read in one pass: each ` is at ` after the first `cannot lock ref ` is tried once, and the hex
 * runs they start do not overlap (a regex with `.*` here backtracks quadratically).
 */
export function movedUnderLock(line: string): boolean {
  const text = line.slice(0, MAX_SERVER_LINE).toLowerCase();
  const lock = text.indexOf(LOCK);
  if (lock === -1) return false;
  for (let at = text.indexOf(IS_AT, lock + LOCK.length); at !== -1; at = text.indexOf(IS_AT, at + 1)) {
    const old = hexRun(text, at + IS_AT.length);
    const rest = at + IS_AT.length + old;
    if (old > 0 && text.startsWith(BUT_EXPECTED, rest) && hexRun(text, rest + BUT_EXPECTED.length) > 0)
      return true;
  }
  return false;
}

/**
 * Whether a rejected push means the branch moved on: the client saw it in the ref advertisement,
 * the server's ref report says so, or the server found the ref elsewhere than our old value while
 * updating it (`cannot lock ref … is at X but expected Y`, in its progress lines).
 */
export function isNonFastForward(error: unknown, remoteLines: string[]): boolean {
  if (error instanceof Errors.PushRejectedError) return error.data.reason === 'not-fast-forward';
  if (!(error instanceof Errors.GitPushError)) return false;
  const reports = Object.values(error.data.result.refs).map((r) => (r.error ?? '').slice(0, MAX_SERVER_LINE));
  return (
    reports.some((why) => /non-fast-forward|fetch first|stale info/i.test(why)) ||
    remoteLines.some(movedUnderLock)
  );
}

/**
 * `error` as a GitFailure. `repository` names the repository (describeUrl); `remoteLines` are the
 * server's progress lines (a hook's output arrives there); `redact` takes the credentials out of
 * whatever the server says before it is cut and quoted.
 */
export function classify(
  error: unknown,
  repository: string,
  remoteLines: string[] = [],
  redact: Redact = noSecrets,
): GitFailure {
  if (error instanceof GitFailure) return error;
  if (error instanceof Errors.HttpError) {
    const status = error.data.statusCode;
    if (status === 401 || status === 403) {
      return new GitFailure(
        'GitAuthRefused',
        `${repository} refused the credentials (HTTP ${status}): check the username and password (a token with write access) in spec.gitWriteBack.secretRef`,
      );
    }
    if (status === 404)
      return new GitFailure('GitUnreachable', `no Git repository at ${repository} (HTTP 404)`);
    return new GitFailure('GitUnreachable', `${repository} answered HTTP ${status}`);
  }
  if (error instanceof Errors.GitPushError) {
    const report =
      Object.values(error.data.result.refs).find((r) => !r.ok)?.error ?? error.data.result.error ?? '';
    const why =
      serverReason(
        remoteLines.map((l) => (l.startsWith('remote:') ? l.slice('remote:'.length) : l)),
        redact,
      ) ??
      serverReason([report], redact) ??
      'no reason given';
    return new GitFailure('GitBranchProtected', `${repository} refused the push: ${why}`);
  }
  if (
    error instanceof Errors.ParseError ||
    error instanceof Errors.SmartHttpError ||
    error instanceof Errors.EmptyServerResponseError ||
    error instanceof Errors.UnknownTransportError ||
    error instanceof Errors.InvalidOidError
  ) {
    return new GitFailure(
      'GitUnreachable',
      `${repository} did not answer as a Git smart HTTP server (${error.code})`,
    );
  }
  if (error instanceof Errors.RemoteCapabilityError) {
    return new GitFailure(
      'GitUnreachable',
      `${repository} does not offer shallow fetches (Git's "${error.data.capability}" capability), which write-back needs`,
    );
  }
  if (isGitError(error))
    return new GitFailure('GitUnreachable', `writing to ${repository} failed (${error.code})`);
  if (error instanceof HttpTimeoutError)
    return new GitFailure('GitUnreachable', `${repository}: ${error.message}`);
  if (errorCode(error)) return new GitFailure('GitUnreachable', `${repository} ${connectionFailure(error)}`);
  const name = (error as { code?: unknown; name?: unknown })?.code ?? (error as { name?: unknown })?.name;
  return new GitFailure(
    'GitUnreachable',
    `writing to ${repository} failed (${typeof name === 'string' ? name : 'unknown error'})`,
  );
}

/** One of isomorphic-git's errors (their base class is not exported). */
function isGitError(error: unknown): error is Error & { code: string } {
  return Object.values(Errors).some((type) => typeof type === 'function' && error instanceof type);
}
