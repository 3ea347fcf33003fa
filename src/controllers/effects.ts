// The two writes every controller makes after deciding: status (server-side apply to /status,
// only when it changed, so steady state writes nothing) and events.
import { isDeepStrictEqual } from 'node:util';
import { type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import type { EventNote, EventRegarding, EventSink } from './types.ts';

interface WithStatus<S> extends EventRegarding {
  status?: S;
}

export async function writeStatus<S>(
  kube: KubeClient,
  plural: string,
  obj: WithStatus<S>,
  status: S,
): Promise<void> {
  if (isDeepStrictEqual(obj.status ?? {}, status)) return;
  const { namespace, name } = obj.metadata;
  await kube.apply(`${resourcePath(obj.apiVersion, plural, namespace, name)}/status`, {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name, namespace },
    status,
  });
}

export async function emitEvents(
  sink: EventSink,
  obj: EventRegarding,
  events: readonly EventNote[],
): Promise<void> {
  for (const e of events) await sink.emit(obj, e.type, e.reason, e.note);
}
