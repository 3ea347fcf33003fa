// What a bundle that could not be fetched or verified means for the user: a pin the export does not
// hold needs the spec changed; anything else is tried again with backoff.
import type { FailureReason } from '../crd/reasons.ts';
import { type Failure, failure } from '../failure.ts';
import { BundleError } from './errors.ts';

export function bundleFailure(error: unknown): Failure<FailureReason> | undefined {
  if (!(error instanceof BundleError)) return undefined;
  if (error.reason === 'VersionMismatch')
    return failure('PinnedVersionMismatch', error.message, true, 15 * 60_000);
  return failure('BundleInvalid', `The bundle could not be fetched or verified: ${error.message}`, false);
}
