// What a target that cannot take the values means for the user: an object to fix (looked at again
// soon, it is not watched) or a write the operator may not make.
import type { FailureReason } from '../crd/reasons.ts';
import { type Failure, failure } from '../failure.ts';
import { TargetError, TargetMisconfiguredError } from './owned.ts';

/** A HelmRelease or Application the user is fixing is looked at again this often (it is not watched). */
export const TARGET_RECHECK_MS = 30_000;

export function targetFailure(error: unknown): Failure<FailureReason> | undefined {
  if (error instanceof TargetMisconfiguredError)
    return failure('TargetMisconfigured', error.message, true, TARGET_RECHECK_MS);
  if (error instanceof TargetError) return failure('TargetFailed', error.message, true, 5 * 60_000);
  return undefined;
}
