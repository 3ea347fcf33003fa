// Maps what went wrong to what the user sees (src/failure.ts): each module classifies its own
// errors, and this chain asks them in order; an error none of them knows is a ReconcileError.

import type { z } from 'zod';
import { adminApiFailure } from '../api/failures.ts';
import { NetworkError, ServerError, TimeoutError } from '../api/index.ts';
import { bundleFailure } from '../bundle/failures.ts';
import type { ConditionReason, FailureReason } from '../crd/reasons.ts';
import { type ErrorClassifier, type Failure as FailureOf, failure as failureOf } from '../failure.ts';
import { registryFailure } from '../oci/failures.ts';
import { type ConditionChange, type Progress, progressConditions } from '../runtime/conditions.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import { kubeApiFailure } from '../runtime/kube-failures.ts';
import { targetFailure } from '../targets/failures.ts';
import type { EventNote } from './types.ts';

/** A failure with one of the documented reasons. */
export type Failure = FailureOf<FailureReason>;

/** A failure with one of the documented reasons, its message scrubbed. */
export const failure = failureOf<FailureReason>;

/**
 * The modules' classifiers, asked in this order (test/unit/controllers/failures.test.ts pins it):
 * the first that knows the error says what the user sees. Their errors are of disjoint classes.
 */
export const ERROR_CLASSIFIERS: readonly ErrorClassifier<FailureReason>[] = [
  adminApiFailure,
  bundleFailure,
  targetFailure,
  registryFailure,
  kubeApiFailure,
];

/** The catch-all at the chain's end: an error no module classifies, with its own message. */
function unclassifiedFailure(error: unknown): Failure {
  const message = error instanceof Error ? error.message : String(error);
  return failure('ReconcileError', message, false);
}

/** `secretRef` names the Secret in messages ("ns/name key apiKey"). */
export function classifyError(error: unknown, secretRef: string): Failure {
  for (const classify of ERROR_CLASSIFIERS) {
    const classified = classify(error, secretRef);
    if (classified) return classified;
  }
  return unclassifiedFailure(error);
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
