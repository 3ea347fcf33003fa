// What the user sees of something that went wrong, as a value: a one-word reason, a message that
// says what to do, whether it needs the user (Stalled, no hot loop) and when to try again. Each
// module says what its own errors mean in these terms (its classifier); the controllers compose
// the classifiers and fix the reasons to the documented ones (src/controllers/failures.ts).
import { scrub } from './redact.ts';

export interface Failure<Reason extends string> {
  reason: Reason;
  message: string;
  /** Needs the user to act (key, plan, spec); retried slowly, not with the error backoff. */
  stalled: boolean;
  /** Fixed delay before the next try; undefined = the work queue's exponential backoff. */
  retryAfterMs?: number;
}

/** A failure whose message holds no secret (scrubbed). */
export function failure<Reason extends string>(
  reason: Reason,
  message: string,
  stalled: boolean,
  retryAfterMs?: number,
): Failure<Reason> {
  return {
    reason,
    message: scrub(message),
    stalled,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/**
 * One module's reading of an error: the failure it means for the user, or undefined when the
 * error is not that module's. `secretRef` names the credentials Secret for messages.
 */
export type ErrorClassifier<Reason extends string> = (
  error: unknown,
  secretRef: string,
) => Failure<Reason> | undefined;
