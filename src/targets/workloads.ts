// The workloads that serve a release: the site chart's (labelled with the name of the Secret their
// pods read the link from) plus spec.rollout.workloadRefs. Rolling one is a server-side apply of
// only its pod template's annotations, as the operator's field manager: Helm 3's three-way merge
// and Helm 4's server-side apply leave fields they never set alone, so `helm upgrade` keeps them.
// The operator needs get, list, watch and patch on deployments and statefulsets (apps) for this.
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { permitted } from './owned.ts';
import { type PodContent, readyPodContent } from './pod-content.ts';

/** Set by the site chart on its Deployment: the Secret the pods read the link and version from. */
export const VALUES_SECRET_LABEL = 'staticexport.dev/values-secret';
export const RENEWED_AT_ANNOTATION = 'staticexport.dev/renewed-at';

type WorkloadKind = 'Deployment' | 'StatefulSet';
export const WORKLOAD_KINDS: readonly WorkloadKind[] = ['Deployment', 'StatefulSet'];

export interface WorkloadRef {
  kind: WorkloadKind;
  name: string;
}

/** How far a workload's rollout has come, from its status alone. */
export type RolloutProgress =
  | { state: 'done' }
  | { state: 'progressing'; message: string }
  | { state: 'failed'; message: string };

export interface Workload extends WorkloadRef {
  generation: number;
  /** Its pod template's annotations. */
  annotations: Record<string, string>;
  progress: RolloutProgress;
  /** Its ready pods and what each serves (read only when asked: spec.rollout.onNewContent Sync). */
  pods?: PodContent[];
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The fields of a Deployment or StatefulSet this module reads. */
export interface WorkloadObject {
  kind?: string;
  metadata: { name: string; generation?: number };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template?: { metadata?: { annotations?: Record<string, string> } };
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    conditions?: Condition[];
  };
}

const PLURAL: Record<WorkloadKind, string> = { Deployment: 'deployments', StatefulSet: 'statefulsets' };

const NEEDS = 'get, list, watch and patch on deployments and statefulsets (apps)';

/** `kubectl rollout status`'s rules: done once every replica runs the newest template and is available. */
export function rolloutProgress(kind: WorkloadKind, w: WorkloadObject): RolloutProgress {
  const generation = w.metadata.generation ?? 0;
  const s = w.status ?? {};
  if ((s.observedGeneration ?? 0) < generation)
    return { state: 'progressing', message: `waiting for generation ${generation} to be observed` };
  const replicas = w.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  if (kind === 'Deployment') {
    const progressing = s.conditions?.find((c) => c.type === 'Progressing');
    if (progressing?.reason === 'ProgressDeadlineExceeded')
      return { state: 'failed', message: progressing.message ?? 'progress deadline exceeded' };
    if (updated < replicas)
      return { state: 'progressing', message: `${updated} of ${replicas} replicas updated` };
    if ((s.replicas ?? 0) > updated)
      return {
        state: 'progressing',
        message: `${(s.replicas ?? 0) - updated} old replicas pending termination`,
      };
    if ((s.availableReplicas ?? 0) < updated)
      return {
        state: 'progressing',
        message: `${s.availableReplicas ?? 0} of ${updated} updated replicas available`,
      };
    return { state: 'done' };
  }
  // OnDelete: pods take the new template only when someone deletes them; nothing to wait for.
  if (w.spec?.updateStrategy?.type === 'OnDelete') return { state: 'done' };
  const partition = w.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    return updated < replicas - partition
      ? { state: 'progressing', message: `${updated} of ${replicas - partition} replicas updated` }
      : { state: 'done' };
  }
  if ((s.readyReplicas ?? 0) < replicas)
    return { state: 'progressing', message: `${s.readyReplicas ?? 0} of ${replicas} replicas ready` };
  if (s.updateRevision !== s.currentRevision)
    return { state: 'progressing', message: `${updated} of ${replicas} replicas updated` };
  return { state: 'done' };
}

function toWorkload(kind: WorkloadKind, w: WorkloadObject): Workload {
  return {
    kind,
    name: w.metadata.name,
    generation: w.metadata.generation ?? 0,
    annotations: w.spec?.template?.metadata?.annotations ?? {},
    progress: rolloutProgress(kind, w),
  };
}

/**
 * Whether the operator's (metadata) cache of labelled workloads may hold one of `kind` labelled
 * with `valuesSecret` in `namespace`. False only when the synced cache has none: one created
 * meanwhile reaches the cache and then reconciles the release anyway.
 */
export type LabelledWorkloads = (kind: WorkloadKind, namespace: string, valuesSecret: string) => boolean;

interface FindOptions {
  signal?: AbortSignal;
  /** Kinds the operator's cache holds none of are not listed. */
  labelled?: LabelledWorkloads;
  /** Also read each workload's ready pods and the version each serves. */
  pods?: boolean;
}

/**
 * The workloads serving a release in `namespace`: those labelled with `valuesSecret` (when the
 * release writes one) and `refs`. A ref that does not exist is returned in `missing`.
 */
export async function findWorkloads(
  kube: KubeClient,
  namespace: string,
  valuesSecret: string | undefined,
  refs: readonly WorkloadRef[],
  { signal, labelled, pods }: FindOptions = {},
): Promise<{ workloads: Workload[]; missing: WorkloadRef[] }> {
  const found = new Map<string, { kind: WorkloadKind; object: WorkloadObject }>();
  const key = (r: WorkloadRef) => `${r.kind}/${r.name}`;
  if (valuesSecret) {
    const kinds = labelled
      ? WORKLOAD_KINDS.filter((k) => labelled(k, namespace, valuesSecret))
      : WORKLOAD_KINDS;
    const lists = await Promise.all(
      kinds.map(async (kind) => {
        const list = await permitted(`Listing ${PLURAL[kind]} in ${namespace}`, NEEDS, () =>
          kube.list<WorkloadObject>(
            resourcePath('apps/v1', PLURAL[kind], namespace),
            { labelSelector: `${VALUES_SECRET_LABEL}=${valuesSecret}` },
            500,
            signal,
          ),
        );
        return list.items.map((object) => ({ kind, object }));
      }),
    );
    for (const w of lists.flat()) found.set(key({ kind: w.kind, name: w.object.metadata.name }), w);
  }
  const missing: WorkloadRef[] = [];
  for (const ref of refs) {
    if (found.has(key(ref))) continue;
    try {
      const object = await permitted(`Reading ${ref.kind}/${ref.name}`, NEEDS, () =>
        kube.request<WorkloadObject>(
          'GET',
          resourcePath('apps/v1', PLURAL[ref.kind], namespace, ref.name),
          signal ? { signal } : {},
        ),
      );
      found.set(key(ref), { kind: ref.kind, object });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      missing.push({ kind: ref.kind, name: ref.name });
    }
  }
  const workloads = await Promise.all(
    [...found.values()].map(async ({ kind, object }) => {
      const w = toWorkload(kind, object);
      const matchLabels = object.spec?.selector?.matchLabels;
      if (!pods || !matchLabels) return w;
      return { ...w, pods: await readyPodContent(kube, namespace, matchLabels, signal) };
    }),
  );
  return { workloads, missing };
}

/**
 * Rolls one workload: applies `annotations` on its pod template (and nothing else) as the
 * operator's field manager. Returns the workload's generation after the change.
 */
export async function rollWorkload(
  kube: KubeClient,
  namespace: string,
  ref: WorkloadRef,
  annotations: Record<string, string>,
): Promise<number> {
  const applied = await permitted(`Rolling ${ref.kind}/${ref.name}`, NEEDS, () =>
    kube.apply<WorkloadObject>(resourcePath('apps/v1', PLURAL[ref.kind], namespace, ref.name), {
      apiVersion: 'apps/v1',
      kind: ref.kind,
      metadata: { name: ref.name, namespace },
      spec: { template: { metadata: { annotations } } },
    }),
  );
  return applied.metadata.generation ?? 0;
}
