// The releases the trigger receiver answers for, from its own watch: a call for a name is resolved
// in memory, so an unknown name costs no API read, and a release is known as soon as the watch
// delivers it. Every replica serves the receiver, leading or not, while the reconcilers' caches
// exist only on the leader: hence a watch of its own, keeping a few fields per release.
import { GROUP_VERSION, SER_PLURAL, type StaticExportRelease } from '../crd/index.ts';
import type { Logger } from '../log.ts';
import { Informer, type KubeObject, type ListWatchClient } from '../runtime/informer.ts';

export type TokenSecretRef = NonNullable<StaticExportRelease['spec']['trigger']>['tokenSecretRef'];

/** What the receiver keeps of a release: who it is (for the event) and where its token is. */
interface TriggerRelease extends KubeObject {
  tokenSecretRef?: TokenSecretRef;
}

/** The fields a call is checked against, and nothing else (a release is a few KiB; this, a few dozen bytes). */
function triggerRelease(obj: KubeObject): TriggerRelease {
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  const ref = (obj as StaticExportRelease).spec?.trigger?.tokenSecretRef;
  return {
    metadata: { name, namespace, uid, resourceVersion },
    ...(ref ? { tokenSecretRef: { name: ref.name, key: ref.key } } : {}),
  };
}

interface TriggerReleasesOptions {
  client: ListWatchClient;
  /** Namespaces the operator watches; empty for all. */
  namespaces: readonly string[];
  logger: Logger;
  watchdogMs?: number;
}

export function watchTriggerReleases(o: TriggerReleasesOptions): Informer<TriggerRelease> {
  return new Informer<TriggerRelease>({
    client: o.client,
    apiVersion: GROUP_VERSION,
    plural: SER_PLURAL,
    namespaces: [...o.namespaces],
    logger: o.logger,
    transform: triggerRelease,
    // Nothing handles its changes: a resync would only walk the cache.
    resyncMs: 0,
    ...(o.watchdogMs ? { watchdogMs: o.watchdogMs } : {}),
  });
}
