import { z } from 'zod';
import { conditionSchema } from '../runtime/conditions.ts';
import { matching, objectName, withCel } from './validation.ts';

export const API_GROUP = 'staticexport.dev';
export const API_VERSION = 'v1alpha1';
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
export const CATEGORY = 'static-export';

/** A key of a Secret in the resource namespace; `what` says what the value is. */
export const secretKeyRef = (field: string, o: { defaultKey: string; what: string; describe: string }) =>
  z
    .object({
      name: objectName(`${field}.name`).describe('Name of a Secret in the resource namespace.'),
      key: matching(
        '^[-._a-zA-Z0-9]+$',
        `${field}.key must be a Secret data key (letters, digits, '-', '_' and '.')`,
        253,
      )
        .default(o.defaultKey)
        .describe(`Key within the Secret that holds ${o.what}.`),
    })
    .describe(o.describe);

export const secretKeySelector = (field: string) =>
  secretKeyRef(field, {
    defaultKey: 'apiKey',
    what: 'the admin API key',
    describe: 'Secret holding the admin API key (Authorization: Bearer).',
  });

/** Conditions as a map list keyed by type (API conventions). */
export const conditionsSchema = z
  .array(conditionSchema)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
  .describe(
    'Ready, Reconciling (present only while True: work under way) and Stalled (present only while True: the user must act), as kstatus, Flux and Argo CD read them.',
  );

/**
 * `status.observedGeneration`, -1 until the operator first writes it (the API server fills the
 * default in), so kstatus reports a new object InProgress, not Current, before its first reconcile.
 */
export const observedGenerationSchema = z
  .number()
  .int()
  .optional()
  .meta({ default: -1 })
  .describe('The metadata.generation the operator last acted on; -1 before it first did.');

export const timestamp = () => z.iso.datetime();

/**
 * A call the platform must get at most once (it has no idempotency key), recorded in status before
 * it is sent: `sending` while it may be in flight, `OutcomeUnknown` once a reconcile found it there
 * without the call's answer recorded. Cleared when the answer is recorded.
 */
export const pendingCallSchema = <P extends string>(sending: P, call: string) =>
  z
    .object({
      phase: z
        .enum([sending, 'OutcomeUnknown'])
        .describe(`${sending}: the ${call} may be in flight; OutcomeUnknown: its answer was never recorded.`),
      since: timestamp().describe(`When the ${call} was about to be sent.`),
    })
    .describe(`Set before the ${call} is sent; cleared once its answer is recorded.`);

export const metadataSchema = z
  .object({
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    generation: z.number().int().optional(),
    resourceVersion: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    finalizers: z.array(z.string()).optional(),
    deletionTimestamp: z.union([z.string(), z.date()]).optional(),
    creationTimestamp: z.union([z.string(), z.date()]).optional(),
  })
  .loose();

export { withCel };
