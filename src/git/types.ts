// src/git/types.ts  (A)  — plain TS types for the engine's inputs/outputs
export interface GitTarget {
  url: string; // https://host/owner/repo(.git); never with userinfo
  branch?: string; // undefined: the remote's default branch (HEAD symref)
  pushBranch?: string; // push here instead (created from `branch` when missing)
  path: string; // file in the repository, relative, no '..'
  field: string; // YAML path, dotted: 'staticExport.version'
}
export type GitCredentials = { kind: 'none' } | { kind: 'basic'; username: string; password: string }; // Flux GitRepository HTTPS secret keys
export interface WriteVersionRequest {
  target: GitTarget;
  credentials: GitCredentials;
  version: string;
  author: { name: string; email: string };
  message: string; // already rendered by B's renderCommitMessage
  allowInsecureHttp: boolean;
  signal?: AbortSignal;
}
export type GitFailureReason =
  | 'GitAuthRefused' // 401/403 on fetch or push
  | 'GitBranchProtected' // push refused by the server for policy (pre-receive hook / protected ref)
  | 'GitBranchMissing' // `branch` not on the remote
  | 'GitPathMissing' // values file not in the repository (override files are created)
  | 'GitFieldInvalid' // the YAML path crosses a non-mapping / file is not YAML
  | 'GitNonFastForward' // still rejected after the retries
  | 'GitRedirected' // the server redirected to another host: credentials never follow
  | 'GitUnreachable' // connection refused, DNS, timeout, 5xx
  | 'GitUnsupported'; // ssh or other scheme
export type WriteVersionOutcome =
  | { outcome: 'Committed'; commit: string; branch: string; attempts: number }
  | { outcome: 'AlreadyWritten'; commit: string; branch: string } // file already holds the version: no commit
  | { outcome: 'Failed'; reason: GitFailureReason; message: string }; // message: no secrets, no URL userinfo
