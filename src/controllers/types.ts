import type { EventReason, FailureReason } from '../crd/reasons.ts';
import type { Failure } from '../failure.ts';
import type { EventSink as AnyEventSink } from '../runtime/events.ts';

export type { ReconcileResult } from '../runtime/controller.ts';
export type { EventRegarding } from '../runtime/events.ts';

/** Where controllers report what they did, with the reasons docs/spec documents. */
export type EventSink = AnyEventSink<EventReason>;

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
  | { kind: 'failed'; failure: Failure<FailureReason> };
