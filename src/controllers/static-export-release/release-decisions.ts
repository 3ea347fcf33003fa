// The shapes of decision the rules return, built one way everywhere: `none` and `failed` as both
// controllers build them, a wait for another release's start, and the start marked before its call.
import { none } from '../decision-shape.ts';
import { withRecordedStart } from './budget/recorded-starts.ts';
import type { Decision, StartReason, Status } from './release-model.ts';

export { failed, none } from '../decision-shape.ts';

/** Another release's start is awaited: nothing is said until its outcome; looked at again after `ms`. */
export const awaiting = (status: Status, ms: number): Decision => ({ ...none(status, ms), pending: true });

/**
 * Starts an export, marked in status before the call (written only if the release did not change
 * since it was read). `budgeted` (a release of the current export API): the start is recorded among
 * the last hour's starts with the mark, so whatever the platform answers (a job, 409, 429, nothing)
 * a restarted operator counts it; the start action takes it out again only when nothing was sent.
 */
export const start = (status: Status, now: Date, reason: StartReason, budgeted = false): Decision => ({
  action: { kind: 'start', reason },
  status: {
    ...status,
    start: { phase: 'Starting', since: now.toISOString() },
    ...(budgeted ? { recentStarts: withRecordedStart(status.recentStarts, now) } : {}),
  },
  events: [],
  pending: true,
});
