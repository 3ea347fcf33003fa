// The Git write-back engine's inputs and outputs (issue 33's shared interface): the reconcile
// builds a WriteVersionRequest from spec.gitWriteBack and turns the outcome into status and events.

export interface GitTarget {
  /** https://host/owner/repo(.git), ssh://[user@]host[:port]/path or user@host:path; no password in it. */
  url: string;
  /** undefined: the remote's default branch (its HEAD symref). */
  branch?: string;
  /** Push here instead of `branch`; created from `branch`'s head when missing. */
  pushBranch?: string;
  /** File in the repository: relative, no `..`. */
  path: string;
  /** YAML path, dotted: `staticExport.version`. */
  field: string;
}

/**
 * What Flux's GitRepository Secret holds: `username`/`password` for HTTPS, `identity` (its
 * passphrase in `password`) and `known_hosts` for SSH; `ca.crt` trusted for this repository's HTTPS.
 */
export type GitCredentials =
  | { kind: 'none'; caCert?: string }
  | { kind: 'basic'; username: string; password: string; caCert?: string }
  | { kind: 'ssh'; identity: string; passphrase?: string; knownHosts: string };

export interface WriteVersionRequest {
  target: GitTarget;
  credentials: GitCredentials;
  version: string;
  author: { name: string; email: string };
  /** Already rendered (renderCommitMessage). */
  message: string;
  allowInsecureHttp: boolean;
  /** Sign each commit with this SSH key (gpgsig, as `git -c gpg.format=ssh commit -S`). */
  signingKey?: { identity: string; passphrase?: string };
  /** Aborting rejects the call with the signal's reason; nothing is pushed after that. */
  signal?: AbortSignal;
  /** The whole call's deadline once the repository's lock is held; default GIT_TIMEOUT_MS. */
  timeoutMs?: number;
}

export type GitFailureReason =
  /** 401/403 on fetch or push. */
  | 'GitAuthRefused'
  /** Push refused by the server for policy (pre-receive hook, protected ref). */
  | 'GitBranchProtected'
  /** `branch` is not on the remote. */
  | 'GitBranchMissing'
  /** The values file is not in the repository (override files are created). */
  | 'GitPathMissing'
  /** The YAML path crosses a non-mapping, or the file is not YAML. */
  | 'GitFieldInvalid'
  /** Still rejected as non-fast-forward after the retries. */
  | 'GitNonFastForward'
  /** The server redirected: credentials never follow a redirect. */
  | 'GitRedirected'
  /** Connection refused, DNS, timeout, 5xx, or a server that does not speak Git's smart HTTP. */
  | 'GitUnreachable'
  /** SSH: known_hosts lists no key for the host, or not the key it presented (nothing was sent). */
  | 'GitHostKeyUnknown'
  /** Another scheme, plain http without allowInsecureHttp, credentials unfit for the URL, or a branch tip too large to fetch. */
  | 'GitUnsupported';

export type WriteVersionOutcome =
  | { outcome: 'Committed'; commit: string; branch: string; attempts: number }
  /** The file already holds the version: no commit. */
  | { outcome: 'AlreadyWritten'; commit: string; branch: string }
  /** `message` holds no secret, no URL userinfo and nothing of the file's content. */
  | { outcome: 'Failed'; reason: GitFailureReason; message: string };

/** A classified failure inside the engine; writeVersion turns it into a Failed outcome. */
export class GitFailure extends Error {
  readonly reason: GitFailureReason;
  constructor(reason: GitFailureReason, message: string) {
    super(message);
    this.name = 'GitFailure';
    this.reason = reason;
  }
}
