// The shapes of decision the rules return, built one way everywhere: `none` and `failed` as both
// controllers build them, a wait for another release's start, and the start marked before its call.
import { none } from '../decision.ts';
import type { Decision, EventNote, StartReason, Status } from './model.ts';

export { failed, none } from '../decision.ts';

/** Another release's start is awaited: nothing is said until its outcome; looked at again after `ms`. */
export const awaiting = (status: Status, ms: number): Decision => ({ ...none(status, ms), pending: true });

/** Starts an export, marked in status before the call (written only if the release did not change since it was read). */
export const start = (
  status: Status,
  now: Date,
  reason: StartReason,
  events: EventNote[] = [],
): Decision => ({
  action: { kind: 'start', reason },
  status: { ...status, start: { phase: 'Starting', since: now.toISOString() } },
  events,
  pending: true,
});
