// The shapes of decision the rules return, built one way everywhere.
import { type Failure, failureEvent } from '../failures.ts';
import { withFailure } from './conditions.ts';
import type { Decision, EventNote, Snapshot, StartReason, Status } from './model.ts';
import { clampDelay } from './schedule.ts';

/** Nothing to do but write `status` (and tell `events`); look again after `requeueAfterMs`, if given. */
export const none = (status: Status, requeueAfterMs?: number, events: EventNote[] = []): Decision => ({
  action: { kind: 'none' },
  status,
  events,
  ...(requeueAfterMs === undefined ? {} : { requeueAfterMs: clampDelay(requeueAfterMs) }),
});

/** `f` is what the user sees; its retry rule says when to look again. The spec was seen. */
export const failed = ({ release, now }: Snapshot, status: Status, f: Failure): Decision => ({
  action: { kind: 'none' },
  status: withFailure(status, f, release.metadata.generation, now),
  events: [failureEvent(f)],
  failure: f,
});

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
});
