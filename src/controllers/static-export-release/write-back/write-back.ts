// Git write-back (spec.gitWriteBack): once the target holds a version, that version (never the
// link) is committed to the GitOps repository, so Git shows what the site serves. Pure: when it is
// due, and how its outcome is recorded: in a condition of its own (GitWriteBack), never in Ready,
// which says what is served (kstatus, Flux and Argo CD read it).
import type { StaticExportRelease } from '../../../crd/index.ts';
import type { ConditionReason } from '../../../crd/reasons.ts';
import type { GitFailureReason, WriteVersionOutcome } from '../../../git/types.ts';
import { absent, type ConditionChange } from '../../../runtime/conditions.ts';
import { withConditions } from '../../documented-conditions.ts';
import { type Failure, failure } from '../../failures.ts';
import type { Folded, Snapshot, Status } from '../release-model.ts';

export const GIT_WRITE_BACK = 'GitWriteBack';

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

/**
 * The GitWriteBack condition: True once the served version's commit is recorded for the place the
 * spec names; a failure recorded by withWriteBackFailure stays while the write is still due (the
 * next try replaces it); else Unknown until the version is written. Absent without spec.gitWriteBack.
 */
export function gitWriteBackCondition(
  release: StaticExportRelease,
  status: Status,
): ConditionChange<ConditionReason> {
  const g = release.spec.gitWriteBack;
  if (!g) return absent(GIT_WRITE_BACK);
  const c = status.current;
  if (!c?.version)
    return {
      type: GIT_WRITE_BACK,
      status: 'Unknown',
      reason: 'WriteBackPending',
      message: 'Nothing is served yet',
    };
  if (!writeBackDue(release, status))
    return {
      type: GIT_WRITE_BACK,
      status: 'True',
      reason: 'Committed',
      message: `${c.version} is in ${gitTargetText(g)} as commit ${c.gitCommit}`,
    };
  const failed = status.conditions?.find((x) => x.type === GIT_WRITE_BACK && x.status === 'False');
  if (failed)
    return {
      type: GIT_WRITE_BACK,
      status: 'False',
      reason: failed.reason as ConditionReason,
      message: failed.message,
    };
  return {
    type: GIT_WRITE_BACK,
    status: 'Unknown',
    reason: 'WriteBackPending',
    message: `${c.version} is to be committed to ${gitTargetText(g)}`,
  };
}

/** `status` with the write-back's failure in GitWriteBack (Ready and Stalled are left to what is served). */
export function withWriteBackFailure(
  status: Status,
  f: Failure,
  generation: number | undefined,
  now: Date,
): Status {
  return withConditions(
    status,
    [{ type: GIT_WRITE_BACK, status: 'False', reason: f.reason, message: f.message }],
    generation,
    now,
  );
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
  'GitHostKeyUnknown',
  'GitUrlRefused',
  'GitSecretInvalid',
]);

export type GitWriteBackFailureReason = GitFailureReason | 'GitUrlRefused' | 'GitSecretInvalid';

/** A write-back that failed: the site keeps serving (Ready stays True), and the message says so. */
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
