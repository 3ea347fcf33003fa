// Asking the platform for a job's bundle link, as every publish does first (new content, a pin, a
// renewal, a repair), and the pure fold of the answer: a 404 of a job already served or pinned
// (served-job-gone.ts), a link that arrived expired (refused), else the link to go on with.
import {
  type GeneratedBundle,
  NotFoundError,
  RevisionUnavailableError,
  recordedJobRef,
} from '../../../api/index.ts';
import { linkArrivedExpired } from '../../../bundle/index.ts';
import type { Failure } from '../../failures.ts';
import type { Of, ReleaseRun, Step } from '../release-effect.ts';
import type { Snapshot, Tunables } from '../release-model.ts';
import type { PlatformLook } from '../sources/source.ts';
import { foldJobMissing } from './served-job-gone.ts';

/** What asking for a job's link came to. */
export type LinkAnswer =
  | { kind: 'link'; bundle: GeneratedBundle }
  | { kind: 'notFound'; error: NotFoundError };

/**
 * Asks for the link of the job `action` names. A link generated for another release of the group a
 * moment ago serves this one too (or the one the poll that saw the job complete carried, in the
 * current export API). Only a job already served or pinned can answer 404 as an outcome: new
 * content's 404 is a failure like any other.
 */
export async function askLink(
  { observed: { client }, visit }: PlatformLook,
  action: Of<'publish'>,
  run: ReleaseRun,
): Promise<LinkAnswer> {
  const { signal } = run;
  const job = recordedJobRef(action);
  try {
    return { kind: 'link', bundle: await visit.link(action.jobId, () => client.exportLink(job, { signal })) };
  } catch (e) {
    // No such endpoint is not a purged job: the revision's own reason says to move the release.
    const purged = e instanceof NotFoundError && !(e instanceof RevisionUnavailableError);
    if (!purged || action.mode === 'NewContent' || signal?.aborted) throw e;
    return { kind: 'notFound', error: e };
  }
}

/**
 * The link to go on with, or the step that ends the publish (`release` as meant): a 404 is folded by
 * foldJobMissing; a link that arrives expired would be written, fail every download and be renewed
 * in a loop, so it is refused and asked for again later.
 */
export function foldLink(
  snapshot: Snapshot,
  jobId: string,
  answer: LinkAnswer,
  tun: Tunables,
): { step: Step } | { bundle: GeneratedBundle } {
  if (answer.kind === 'notFound') return { step: foldJobMissing(snapshot, jobId, answer.error, tun) };
  const { expiresAt } = answer.bundle;
  if (!linkArrivedExpired(expiresAt, snapshot.now)) return { bundle: answer.bundle };
  const status = snapshot.release.status ?? {};
  return {
    step: {
      kind: 'fail',
      status,
      failure: linkExpiredOnArrival(jobId, expiresAt, snapshot.now),
      cause: expiresAt,
    },
  };
}

function linkExpiredOnArrival(jobId: string, expiresAt: Date, now: Date): Failure {
  return {
    reason: 'BundleInvalid',
    message: `The platform handed out a bundle link for export job ${jobId} that expires at ${expiresAt.toISOString()}, already expired or within two seconds when it arrived (${now.toISOString()}): nothing was written, and a fresh link is asked for in 5 minutes. If this repeats, check this node's clock (NTP)`,
    stalled: false,
    retryAfterMs: 5 * 60_000,
  };
}
