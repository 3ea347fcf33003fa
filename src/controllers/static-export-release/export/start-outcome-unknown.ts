import { type Failure, failureEvent } from '../../failures.ts';
import { type Rule, rule } from '../../rule-ladder.ts';
import { renewLink } from '../link/link-rules.ts';
import type { Decision, PlatformCase, Status, Tunables } from '../release-model.ts';
import { untilRenewalOr } from '../schedule.ts';

type StartMark = NonNullable<Status['start']>;

const retryAt = (mark: StartMark, tun: Tunables) => Date.parse(mark.since) + tun.startOutcomeWaitMs;

/**
 * The status as the platform's rules read it: a start mark whose wait is over is dropped, so
 * whatever asked for that start (still unrecorded as handled) asks again.
 */
export function withoutExpiredStart(status: Status, now: Date, tun: Tunables): Status {
  if (!status.start || now.getTime() < retryAt(status.start, tun)) return status;
  const { start: _, ...rest } = status;
  return rest;
}

/**
 * First of all, whatever else is wrong now: a start that may have been sent is not repeated before
 * the wait is over (the admin API has no idempotency key). Told once, when first found. The served
 * link is renewed meanwhile when due (a renewal starts nothing): else a wait begun near the renewal
 * time lets it expire.
 */
export const startOutcomeUnknown: Rule<PlatformCase, Decision> = rule('startOutcomeUnknown', (c) => {
  const { o, status, tun } = c;
  const mark = status.start;
  if (!mark) return undefined;
  const at = retryAt(mark, tun);
  const f: Failure = {
    reason: 'StartOutcomeUnknown',
    message:
      `The operator did not learn whether the export it started at ${mark.since} exists (it stopped, lost the ` +
      'connection or could not record the answer). The admin API has no idempotency key, so it does not start ' +
      `another one before ${new Date(at).toISOString()}`,
    stalled: false,
    retryAfterMs: untilRenewalOr(status, at - o.now.getTime(), o.now),
  };
  const held: Status = { ...status, start: { ...mark, phase: 'OutcomeUnknown' } };
  const events = mark.phase === 'Starting' ? [failureEvent(f)] : [];
  const renewal = renewLink.apply({ ...c, status: held });
  if (renewal) return { ...renewal, events: [...events, ...renewal.events] };
  return { action: { kind: 'none' }, status: held, events, failure: f };
});
