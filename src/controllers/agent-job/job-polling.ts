// Following the job once it exists: polled soon after creation, then less often, until its state is
// final (its pull request announced). Its rules, and the ladder's foot that records each poll.
import { failed, none } from '../decision-shape.ts';
import type { Failure } from '../failures.ts';
import { type Rule, rule } from '../rule-ladder.ts';
import { finishedReady } from './agent-job-conditions.ts';
import { type Decision, isFinal, type JobCase, seen, withRemote } from './agent-job-model.ts';

/** Poll soon after creation, then back off: agents take minutes. */
export function agentPollIntervalMs(createdAt: string | undefined, now: Date): number {
  const age = createdAt ? now.getTime() - Date.parse(createdAt) : 0;
  if (age < 30_000) return 2_000;
  if (age < 2 * 60_000) return 5_000;
  if (age < 10 * 60_000) return 15_000;
  return 30_000;
}

/** Done: not polled again; only a spec change (e.g. another key Secret) is seen, so kstatus does not wait on it. */
export const jobFinished: Rule<JobCase, Decision> = rule('jobFinished', ({ o, status }) =>
  status.jobId && isFinal(status.state) ? none(seen(status, o.job.metadata.generation)) : undefined,
);

/** The poll failed: its failure's rule says when to look again. */
export const pollFailed: Rule<JobCase, Decision> = rule('pollFailed', ({ o, status }) =>
  o.poll?.kind === 'failed' ? failed(status, o.poll.failure) : undefined,
);

/** The platform no longer knows the job: nothing more to follow, a human looks. */
export const jobNotFound: Rule<JobCase, Decision> = rule('jobNotFound', ({ o, status }) => {
  if (o.poll?.kind !== 'notFound') return undefined;
  const f: Failure = {
    reason: 'JobNotFound',
    message: `Agent job ${status.jobId} no longer exists on the platform`,
    stalled: true,
  };
  return failed(status, f);
});

/**
 * The foot of the ladder (`settle`): the job as polled is recorded; a final state is announced
 * (a Warning for a failed agent), anything else is polled again.
 */
export function followJob({ o, status }: JobCase): Decision {
  const { poll, now } = o;
  if (poll?.kind !== 'job') return none(status, agentPollIntervalMs(status.createdAt, now));
  const next = withRemote(status, poll.job);
  if (isFinal(next.state)) {
    const ready = finishedReady(next);
    return none(next, undefined, [
      { type: next.state === 'failed' ? 'Warning' : 'Normal', reason: ready.reason, note: ready.message },
    ]);
  }
  return none(next, agentPollIntervalMs(next.createdAt, now));
}
