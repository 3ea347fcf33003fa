// Maps what went wrong to what the user sees: a one-word reason, a message that says what to do,
// whether it needs the user (Stalled, no hot loop) and when to try again.

import type { z } from 'zod';
import {
  AdminApiError,
  AdminKeyError,
  BadRequestError,
  ConflictError,
  NetworkError,
  NotEntitledError,
  ProjectNotFoundError,
  RateLimitedError,
  RevisionUnavailableError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../api/index.ts';
import { BundleError } from '../bundle/index.ts';
import type { ConditionReason, FailureReason } from '../crd/reasons.ts';
import { OciError, SignatureError } from '../oci/errors.ts';
import { scrub } from '../redact.ts';
import { type ConditionChange, type Progress, progressConditions } from '../runtime/conditions.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import { KubeApiError } from '../runtime/kube-client.ts';
import { TargetError, TargetMisconfiguredError } from '../targets/owned.ts';
import type { EventNote } from './types.ts';

export interface Failure {
  reason: FailureReason;
  message: string;
  /** Needs the user to act (key, plan, spec); retried slowly, not with the error backoff. */
  stalled: boolean;
  /** Fixed delay before the next try; undefined = the work queue's exponential backoff. */
  retryAfterMs?: number;
}

const MINUTE = 60_000;
/** A spec that names what the platform does not have is tried again this seldom (and at each change). */
const WRONG_SPEC_RECHECK_MS = 60 * MINUTE;
/** A HelmRelease or Application the user is fixing is looked at again this often (it is not watched). */
export const TARGET_RECHECK_MS = 30_000;

export function failure(
  reason: FailureReason,
  message: string,
  stalled: boolean,
  retryAfterMs?: number,
): Failure {
  return {
    reason,
    message: scrub(message),
    stalled,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/** `secretRef` names the Secret in messages ("ns/name key apiKey"). */
export function classifyError(error: unknown, secretRef: string): Failure {
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
  if (error instanceof BundleError) {
    if (error.reason === 'VersionMismatch')
      return failure('PinnedVersionMismatch', error.message, true, 15 * MINUTE);
    return failure('BundleInvalid', `The bundle could not be fetched or verified: ${error.message}`, false);
  }
  if (error instanceof TargetMisconfiguredError)
    return failure('TargetMisconfigured', error.message, true, TARGET_RECHECK_MS);
  if (error instanceof SignatureError) return signatureInvalid(error.message);
  if (error instanceof OciError) return registryFailure(error);
  if (error instanceof TargetError) return failure('TargetFailed', error.message, true, 5 * MINUTE);
  if (error instanceof KubeApiError) {
    return failure('TargetFailed', `Writing to the Kubernetes API failed: ${error.message}`, false);
  }
  const message = error instanceof Error ? error.message : String(error);
  return failure('ReconcileError', message, false);
}

/** A registry source's call failed (spec.source.oci): what the user sees and when it is tried again. */
function registryFailure(error: OciError): Failure {
  switch (error.reason) {
    case 'Auth':
      return failure(
        'RegistryAuthFailed',
        `The registry refused access: ${error.message}. Put credentials that may pull this repository in the Secret named by spec.source.oci.credentialsSecretRef`,
        true,
        5 * MINUTE,
      );
    case 'NotFound':
      return failure(
        'ImageNotFound',
        `${error.message}: push the site image (static-export mirror push) or fix spec.source.oci`,
        true,
        MINUTE,
      );
    case 'Unavailable':
      return failure('RegistryUnavailable', `The registry is unreachable: ${error.message}`, false);
    case 'Usage':
      return failure('InvalidConfiguration', error.message, true, 5 * MINUTE);
    case 'ContentMismatch':
      return failure(
        'ImageInvalid',
        `The registry sent content that is not what its digest names: ${error.message}. Nothing was published; a registry, cache or proxy on the way altered it or cut it short. Tried again with backoff`,
        false,
      );
    default:
      return failure('ImageInvalid', `The image cannot be used: ${error.message}`, true, 5 * MINUTE);
  }
}

/** The image is unsigned or its signature does not verify with the configured key: nothing is published. */
function signatureInvalid(message: string): Failure {
  return failure(
    'SignatureInvalid',
    `${message}; nothing was published. Push an image signed with the key whose public half is in the Secret named by spec.source.oci.verify.publicKeySecretRef`,
    true,
    MINUTE,
  );
}

/**
 * Whether a failed call that creates something (an agent job, an export) may still have done so:
 * no answer after the request was sent, or a server error other than a gateway's.
 */
export function mayHaveReachedServer(error: unknown): boolean {
  return (
    ((error instanceof NetworkError || error instanceof TimeoutError) && !error.beforeRequestSent) ||
    (error instanceof ServerError && ![502, 503, 504].includes(error.status ?? 0))
  );
}

/**
 * Ready=False with the failure's reason; Stalled=True only when the user must act, else the work
 * still under way (`reconciling`, e.g. an export that goes on while a poll failed) stays Reconciling.
 */
export function failureConditions(
  f: Failure,
  reconciling?: Progress<ConditionReason>,
): ConditionChange<ConditionReason>[] {
  return [
    { type: 'Ready', status: 'False', reason: f.reason, message: f.message },
    ...progressConditions(
      f.stalled
        ? { stalled: { reason: f.reason, message: f.message } }
        : reconciling === undefined
          ? {}
          : { reconciling },
    ),
  ];
}

/** The Warning event that tells the user about a failure. */
export function failureEvent(f: Failure): EventNote {
  return { type: 'Warning', reason: f.reason, note: f.message };
}

/** A spec the CRD schema let through but the operator's schema refuses (e.g. an older CRD). */
export function invalidSpec(error: z.ZodError): Failure {
  return failure(
    'InvalidSpec',
    error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; '),
    true,
  );
}

/** A transient failure with no fixed delay: why the work queue retries it with exponential backoff. */
export class RetryableError extends Error {
  override name = 'RetryableError';
}

/** What the work queue does after a failure: wait a fixed delay, back off, or wait for a change. */
export function afterFailure(f: Failure): ReconcileResult {
  if (f.retryAfterMs !== undefined) return { requeueAfterMs: f.retryAfterMs };
  if (!f.stalled) return { backoff: new RetryableError(f.message) };
  return {};
}

/** The work queue's next step for a decision: its failure's rule, else its requeue delay. */
export function nextStep(d: { failure?: Failure; requeueAfterMs?: number }): ReconcileResult {
  if (d.failure) return afterFailure(d.failure);
  return d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs };
}
