// What a failed fetch or push means for the user, as a GitFailure: isomorphic-git's errors (HTTP
// status, push reports, protocol parse errors) and the network's. Messages name the repository by
// origin and path only and never quote a response body.
import { Errors } from 'isomorphic-git';
import { connectionFailure, errorCode, HttpTimeoutError } from '../http.ts';
import { terminalSafe } from '../terminal-text.ts';
import { GitFailure } from './types.ts';

/** Longest server reason (a pre-receive hook's first line) quoted in a message. */
const MAX_REASON = 200;

/** A server's one-line reason: the first non-empty line, control characters escaped, truncated. */
export function serverReason(lines: string[]): string | undefined {
  for (const raw of lines) {
    // Control characters (a terminal escape, a forged line) show as visible \uXXXX escapes.
    const line = terminalSafe(raw.trim().replace(/[ \t]+/g, ' '));
    if (line === '') continue;
    return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON - 1)}…` : line;
  }
  return undefined;
}

/**
 * Whether a rejected push means the branch moved on: the client saw it in the ref advertisement,
 * the server's ref report says so, or the server found the ref elsewhere than our old value while
 * updating it (`cannot lock ref … is at X but expected Y`, in its progress lines).
 */
export function isNonFastForward(error: unknown, remoteLines: string[]): boolean {
  if (error instanceof Errors.PushRejectedError) return error.data.reason === 'not-fast-forward';
  if (!(error instanceof Errors.GitPushError)) return false;
  const reports = Object.values(error.data.result.refs).map((r) => r.error ?? '');
  return (
    reports.some((why) => /non-fast-forward|fetch first|stale info/i.test(why)) ||
    remoteLines.some((line) => /cannot lock ref .* is at [0-9a-f]+ but expected [0-9a-f]+/i.test(line))
  );
}

/**
 * `error` as a GitFailure. `repository` names the repository (describeUrl); `remoteLines` are the
 * server's progress lines (a hook's output arrives there).
 */
export function classify(error: unknown, repository: string, remoteLines: string[] = []): GitFailure {
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
      serverReason(remoteLines.map((l) => l.replace(/^remote:\s*/, ''))) ??
      serverReason([report]) ??
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
