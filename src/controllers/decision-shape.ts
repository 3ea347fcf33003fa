// What every controller's `decide` returns, built one way for both kinds: one action, the status to
// write before it, events, when to look again, what went wrong, and the rule that chose it.
import { type Failure, failureEvent } from './failures.ts';
import type { EventNote } from './types.ts';

export interface Decision<A extends { kind: string }, S> {
  action: A;
  /** Status to write before the action (or as the whole result when the action is `none`); conditions are derived at commit. */
  status: S;
  events: EventNote[];
  /** Reconcile again after this long; undefined = wait for a change. */
  requeueAfterMs?: number;
  /** What went wrong: its conditions at commit, and its retry rule (fixed delay, backoff or wait) replaces `requeueAfterMs`. */
  failure?: Failure;
  /**
   * An outcome is awaited (a start about to be sent, another release's start): the status is
   * written without new conditions, which its outcome brings.
   */
  pending?: true;
  /** The name of the rule that chose it (logged with the decision). */
  rule?: string;
}

type NoAction = { kind: 'none' };

/** The work queue's shortest wait: a requeue is never sooner than this. */
export const clampDelay = (ms: number) => Math.max(1_000, ms);

/** Nothing to do but write `status` (and tell `events`); look again after `requeueAfterMs`, if given. */
export const none = <S>(
  status: S,
  requeueAfterMs?: number,
  events: EventNote[] = [],
): Decision<NoAction, S> => ({
  action: { kind: 'none' },
  status,
  events,
  ...(requeueAfterMs === undefined ? {} : { requeueAfterMs: clampDelay(requeueAfterMs) }),
});

/** `f` is what the user sees (told by a Warning event); its retry rule says when to look again. */
export const failed = <S>(status: S, f: Failure): Decision<NoAction, S> => ({
  action: { kind: 'none' },
  status,
  events: [failureEvent(f)],
  failure: f,
});
