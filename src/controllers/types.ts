export type { ReconcileResult } from '../runtime/controller.ts';

export interface EventRegarding {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Where controllers report what they did (events.k8s.io Events in the operator). */
export interface EventSink {
  emit(regarding: EventRegarding, type: 'Normal' | 'Warning', reason: string, note: string): Promise<void>;
}

/** An event a decision asks for. */
export interface EventNote {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}
