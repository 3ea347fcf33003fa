import type { Failure } from './failures.ts';
import type { EventReason } from './reasons.ts';

export type { ReconcileResult } from '../runtime/controller.ts';

export interface EventRegarding {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Where controllers report what they did (events.k8s.io Events in the operator). */
export interface EventSink {
  emit(
    regarding: EventRegarding,
    type: 'Normal' | 'Warning',
    reason: EventReason,
    note: string,
  ): Promise<void>;
}

/** An event a decision asks for. */
export interface EventNote {
  type: 'Normal' | 'Warning';
  reason: EventReason;
  note: string;
}

/** A job on the platform, polled: gone and failed calls are outcomes to decide on, not errors. */
export type JobPoll<R> =
  | { kind: 'job'; job: R }
  | { kind: 'notFound' }
  | { kind: 'failed'; failure: Failure };
