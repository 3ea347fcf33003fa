// The writes every controller makes: status (server-side apply to /status, only when it changed, so
// steady state writes nothing) and events.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../runtime/informer.ts';
import { type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import type { EventNote, EventRegarding, EventSink } from './types.ts';

interface WithStatus<S> extends EventRegarding {
  status?: S;
}

/** One object's status during one reconcile: what was last written and what is meant now. */
export class StatusRecord<S extends object> {
  /** The status this reconcile means the object to have (written or not). */
  status: S;
  private written: S;
  private resourceVersion: string | undefined;
  private readonly kube: KubeClient;
  private readonly path: string;
  private readonly obj: WithStatus<S>;
  private readonly onWritten: ((obj: KubeObject) => void) | undefined;

  /** `onWritten` gets the object as stored after each write (for a cache of what this process wrote). */
  constructor(kube: KubeClient, plural: string, obj: WithStatus<S>, onWritten?: (obj: KubeObject) => void) {
    this.kube = kube;
    this.obj = obj;
    this.onWritten = onWritten;
    const { namespace, name } = obj.metadata;
    this.path = `${resourcePath(obj.apiVersion, plural, namespace, name)}/status`;
    this.status = this.written = obj.status ?? ({} as S);
    this.resourceVersion = obj.metadata.resourceVersion;
  }

  /**
   * `ifUnchanged`: only if the object is still as last read or written (its resourceVersion as a
   * precondition), else a 409 conflict: someone else wrote it meanwhile, so what was decided from
   * it may be wrong. Without it the write wins (an outcome that must be recorded whatever happened).
   */
  async write(status: S, opts: { ifUnchanged?: boolean } = {}): Promise<void> {
    this.status = status;
    if (isDeepStrictEqual(this.written, status)) return;
    const { namespace, name } = this.obj.metadata;
    const precondition = opts.ifUnchanged ? { resourceVersion: this.resourceVersion } : {};
    const written = await this.kube.apply<KubeObject | undefined>(this.path, {
      apiVersion: this.obj.apiVersion,
      kind: this.obj.kind,
      metadata: { name, namespace, ...precondition },
      status,
    });
    this.written = status;
    this.resourceVersion = written?.metadata?.resourceVersion;
    if (written?.metadata) this.onWritten?.(written);
  }
}

export async function emitEvents(
  sink: EventSink,
  obj: EventRegarding,
  events: readonly EventNote[],
): Promise<void> {
  for (const e of events) await sink.emit(obj, e.type, e.reason, e.note);
}
