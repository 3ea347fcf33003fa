// What each pod of a workload serves, as its content sync sidecar (`static-export sync`) reports it
// in the pod condition staticexport.dev/ContentServed: read by the operator for
// spec.rollout.onNewContent Sync. The operator needs list on pods for this.
import { type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { permitted } from './owned.ts';

/** The pod condition the sidecar writes (src/sync/reporter.ts): True `serving <version>`, False `serving <old>; <new> failed: …`. */
export const CONTENT_SERVED_CONDITION = 'staticexport.dev/ContentServed';
/** The site chart's name for the sidecar's container: a report counts only while it runs. */
const SYNC_CONTAINER = 'sync';

export interface PodContent {
  name: string;
  /** The version the pod serves; undefined when it reports none (no sidecar, or not yet). */
  served?: string;
  /** The sidecar's message when its last fetch failed (it keeps serving `served`). */
  failure?: string;
  /** When the sidecar last changed what the condition says (its lastTransitionTime). */
  since?: string;
  /** Whether its sync container is running and ready. */
  syncReady: boolean;
}

interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

interface ContainerStatus {
  name: string;
  ready?: boolean;
  state?: { running?: object };
}

export interface PodObject {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { conditions?: PodCondition[]; containerStatuses?: ContainerStatus[] };
}

const SERVING = /^serving (\S+?)(?:;|$)/;

/** What a pod reports serving; undefined for a pod not Ready or going away (it serves no one). */
export function podContent(pod: PodObject): PodContent | undefined {
  const conditions = pod.status?.conditions ?? [];
  if (pod.metadata.deletionTimestamp) return undefined;
  if (conditions.find((c) => c.type === 'Ready')?.status !== 'True') return undefined;
  const c = conditions.find((c) => c.type === CONTENT_SERVED_CONDITION);
  // "serving nothing; …": a sidecar whose first download failed.
  const served = c?.message?.match(SERVING)?.[1];
  const sync = pod.status?.containerStatuses?.find((s) => s.name === SYNC_CONTAINER);
  return {
    name: pod.metadata.name,
    ...(served && served !== 'nothing' ? { served } : {}),
    ...(c?.status === 'False' && c.message ? { failure: c.message } : {}),
    ...(c?.lastTransitionTime ? { since: c.lastTransitionTime } : {}),
    syncReady: sync?.ready === true && sync.state?.running !== undefined,
  };
}

/** The ready pods selected by `matchLabels` in `namespace`, with what each serves. */
export async function readyPodContent(
  kube: KubeClient,
  namespace: string,
  matchLabels: Record<string, string>,
  signal?: AbortSignal,
): Promise<PodContent[]> {
  const labelSelector = Object.entries(matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const list = await permitted(
    `Listing pods in ${namespace}`,
    'list on pods for spec.rollout.onNewContent Sync',
    () => kube.list<PodObject>(resourcePath('v1', 'pods', namespace), { labelSelector }, 500, signal),
  );
  return list.items.map(podContent).filter((p): p is PodContent => p !== undefined);
}
