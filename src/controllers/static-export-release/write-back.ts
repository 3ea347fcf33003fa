// Git write-back (spec.gitWriteBack): once the target holds a version, that version (never the
// link) is committed to the GitOps repository, so Git shows what the site serves. Pure: when it is
// due, and how its outcome is recorded.
import type { StaticExportRelease } from '../../crd/index.ts';
import type { GitFailureReason, WriteVersionOutcome } from '../../git/types.ts';
import { type Failure, failure } from '../failures.ts';
import type { Folded, Snapshot, Status } from './model.ts';

type GitWriteBack = NonNullable<StaticExportRelease['spec']['gitWriteBack']>;

/** Where spec.gitWriteBack writes, as status.current.gitTarget records it: a spec naming another place writes again. */
export function gitTargetText(g: GitWriteBack): string {
  const branch = g.branch ?? "the remote's default branch";
  return `${g.path} (${g.field}) on ${g.pushBranch ? `${g.pushBranch} from ${branch}` : branch} of ${g.url}`;
}

/** The served version is not in Git yet, or not where the spec says now. */
export function writeBackDue(release: StaticExportRelease, status: Status): boolean {
  const g = release.spec.gitWriteBack;
  const c = status.current;
  return g !== undefined && !!c?.version && (!c.gitCommit || c.gitTarget !== gitTargetText(g));
}

/** The commit that holds the served version is recorded; a new commit is told by an Event. */
export function afterWriteBack(
  { release }: Snapshot,
  outcome: Extract<WriteVersionOutcome, { outcome: 'Committed' | 'AlreadyWritten' }>,
): Folded {
  const base = release.status ?? {};
  const g = release.spec.gitWriteBack;
  if (!base.current || !g) return { status: base, events: [] };
  const status = {
    ...base,
    current: { ...base.current, gitCommit: outcome.commit, gitTarget: gitTargetText(g) },
  };
  if (outcome.outcome === 'AlreadyWritten') return { status, events: [] };
  return {
    status,
    events: [
      {
        type: 'Normal',
        reason: 'Committed',
        note: `Committed ${base.current.version} to ${gitTargetText(g)} as ${outcome.commit}`,
      },
    ],
  };
}

const MINUTE = 60_000;

/** Refusals a retry cannot change until someone acts (spec, Secret, repository settings). */
const NEEDS_THE_USER: ReadonlySet<GitWriteBackFailureReason> = new Set([
  'GitAuthRefused',
  'GitBranchProtected',
  'GitBranchMissing',
  'GitPathMissing',
  'GitFieldInvalid',
  'GitRedirected',
  'GitUnsupported',
  'GitUrlRefused',
  'GitSecretInvalid',
]);

export type GitWriteBackFailureReason = GitFailureReason | 'GitUrlRefused' | 'GitSecretInvalid';

/** A write-back that failed: the site keeps serving, and the message says so. */
export function writeBackFailure(
  status: Status,
  reason: GitWriteBackFailureReason,
  cause: string,
  retryAfterMs?: number,
): Failure {
  const stalled = NEEDS_THE_USER.has(reason);
  return failure(
    reason,
    `Git write-back of ${status.current?.version} failed: ${cause}. The site keeps serving it; ${stalled ? 'tried again when the spec or the Secret changes (and every 5 minutes)' : 'tried again with backoff'}`,
    stalled,
    retryAfterMs ?? (stalled ? 5 * MINUTE : undefined),
  );
}
