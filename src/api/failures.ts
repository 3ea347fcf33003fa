// What the admin API's errors mean for the user of a resource: the reason, a message that names the
// Secret to fix or the spec field to set, and when the call is tried again.
import type { FailureReason } from '../crd/reasons.ts';
import { type Failure, failure } from '../failure.ts';
import {
  AdminApiError,
  AdminKeyError,
  BadRequestError,
  ConflictError,
  NotEntitledError,
  ProjectNotFoundError,
  RateLimitedError,
  RevisionUnavailableError,
  UnauthorizedError,
} from './errors.ts';

const MINUTE = 60_000;
/** A spec that names what the platform does not have is tried again this seldom (and at each change). */
const WRONG_SPEC_RECHECK_MS = 60 * MINUTE;

/** `secretRef` names the Secret in messages ("ns/name key apiKey"); undefined for another module's error. */
export function adminApiFailure(error: unknown, secretRef: string): Failure<FailureReason> | undefined {
  if (error instanceof AdminKeyError) {
    return failure(
      'InvalidCredentials',
      `The key in Secret ${secretRef} is not usable: ${error.message}`,
      true,
      5 * MINUTE,
    );
  }
  // What 401 and 403 mean differs between the two revisions of the export API: the client's
  // message says it for the revision called; here the Secret to fix is named.
  if (error instanceof UnauthorizedError) {
    return failure(
      'AuthenticationFailed',
      `The admin API rejected the key in Secret ${secretRef}: ${error.message}`,
      true,
      5 * MINUTE,
    );
  }
  if (error instanceof NotEntitledError) {
    return failure(
      'NotEntitled',
      `The admin API refused the call with the key in Secret ${secretRef}: ${error.message}`,
      true,
      15 * MINUTE,
    );
  }
  if (error instanceof RateLimitedError) {
    return failure('RateLimited', error.message, false, error.retryAfterMs ?? MINUTE);
  }
  if (error instanceof BadRequestError) {
    return failure(
      'InvalidRequest',
      `The admin API refused the request: ${error.message}`,
      true,
      15 * MINUTE,
    );
  }
  // A 404 on a start is no passing trouble: retrying cannot make the project or the endpoint exist.
  if (error instanceof ProjectNotFoundError) {
    return failure(
      'ProjectNotFound',
      `The admin API knows no such project (404 on the export start: ${error.message}). Set spec.projectId to the project's id, or put a key of the organization that owns the project in Secret ${secretRef}; tried again when the spec or the Secret changes, and hourly`,
      true,
      WRONG_SPEC_RECHECK_MS,
    );
  }
  if (error instanceof RevisionUnavailableError) {
    return failure(
      'RevisionUnavailable',
      `The admin API no longer has the export API this release uses (${error.message}). Move the release to the platform's current export API: set spec.projectId (the project's id) in place of spec.domain; tried again when the spec changes, and hourly`,
      true,
      WRONG_SPEC_RECHECK_MS,
    );
  }
  if (error instanceof ConflictError) {
    return failure('ExportConflict', `The admin API reported a conflict: ${error.message}`, false, 30_000);
  }
  if (error instanceof AdminApiError) {
    return failure('ApiUnavailable', `The admin API call failed: ${error.message}`, false);
  }
  return undefined;
}
