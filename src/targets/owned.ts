// Objects the operator writes for a release and owns (owner reference, garbage-collected with it):
// the values Secret and, for Flux, the version ConfigMap. One way to write them safely.
import { GROUP_VERSION, SER_KIND, type StaticExportRelease } from '../crd/index.ts';
import type { CachedReader } from '../runtime/cached-reader.ts';
import type { KubeObject } from '../runtime/informer.ts';
import {
  isConflict,
  isNotFound,
  KubeApiError,
  type KubeClient,
  resourcePath,
} from '../runtime/kube-client.ts';

export const MANAGED_BY = 'static-export-operator';

export class TargetError extends Error {
  override name = 'TargetError';
}

/** The object the user must fix (a HelmRelease or Application not set up to read what we write). */
export class TargetMisconfiguredError extends TargetError {
  override name = 'TargetMisconfiguredError';
}

/**
 * `call`, whose refusal (403) becomes a TargetError saying which permission the operator lacks:
 * its ClusterRole is the user's to fix. `needs` completes "the operator needs …".
 */
export async function permitted<T>(what: string, needs: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof KubeApiError && e.status === 403)
      throw new TargetError(`${what} was refused (${e.message}): the operator needs ${needs}`);
    throw e;
  }
}

export interface OwnedObject {
  metadata: {
    name: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { uid: string; controller?: boolean }[];
  };
  data?: Record<string, string>;
}

/**
 * The operator's cache of Secrets (see CachedReader): `get` when it is known current, else a GET;
 * `getIfCached` also answers "absent" from the synced cache alone; `remember` takes what was written.
 */
export type OwnedCache = Pick<CachedReader<KubeObject & OwnedObject>, 'get' | 'getIfCached' | 'remember'>;

type OwnedKind = 'Secret' | 'ConfigMap';
const PLURAL: Record<OwnedKind, string> = { Secret: 'secrets', ConfigMap: 'configmaps' };

export const isOwnedBy = (release: StaticExportRelease, o: OwnedObject) =>
  (o.metadata.ownerReferences ?? []).some((r) => r.uid === release.metadata.uid && r.controller);

/**
 * GET one of them; undefined when absent. With `cache`, from the operator's cache where it is known
 * current; `trustAbsence` also takes the synced cache's word that it does not exist (for a create,
 * which fails anyway if it does).
 */
export async function getOwnable(
  kube: KubeClient,
  kind: OwnedKind,
  namespace: string,
  name: string,
  signal?: AbortSignal,
  cache?: OwnedCache,
  trustAbsence = false,
): Promise<OwnedObject | undefined> {
  try {
    if (cache)
      return trustAbsence
        ? await cache.getIfCached(namespace, name, signal)
        : await cache.get(namespace, name, signal);
    return await kube.get<OwnedObject>(resourcePath('v1', PLURAL[kind], namespace, name), signal);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The object's metadata as the operator writes it: labelled, owned by the release. */
export function ownedMetadata(
  release: StaticExportRelease,
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
) {
  return {
    name,
    namespace: release.metadata.namespace,
    labels: {
      'app.kubernetes.io/managed-by': MANAGED_BY,
      'staticexport.dev/release': release.metadata.name ?? '',
      ...labels,
    },
    annotations,
    ownerReferences: [
      {
        apiVersion: GROUP_VERSION,
        kind: SER_KIND,
        name: release.metadata.name ?? '',
        uid: release.metadata.uid ?? '',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  };
}

const WRITE_ATTEMPTS = 3;

/**
 * Writes `desired` unless `holds` says the object already carries it. Returns whether it wrote.
 * Never takes over an object it does not own: an absent one is created (POST: it fails if someone
 * else created it meanwhile), ours is updated only as last read (its resourceVersion as a
 * precondition); either conflict means look again, and refuse if it is no longer ours. `field` is
 * the spec field naming it, for the error.
 */
export async function writeOwned(
  kube: KubeClient,
  release: StaticExportRelease,
  kind: OwnedKind,
  desired: { metadata: { name: string } },
  holds: (observed: OwnedObject) => boolean,
  field: string,
  signal?: AbortSignal,
  cache?: OwnedCache,
): Promise<boolean> {
  const namespace = release.metadata.namespace ?? '';
  const name = desired.metadata.name;
  for (let attempt = 1; ; attempt++) {
    // After a conflict the cache was wrong: look at the API server itself.
    const observed = await getOwnable(
      kube,
      kind,
      namespace,
      name,
      signal,
      attempt === 1 ? cache : undefined,
      true,
    );
    if (observed && !isOwnedBy(release, observed)) {
      throw new TargetError(
        `${kind} ${namespace}/${name} exists and is not managed by this StaticExportRelease: ` +
          `choose another ${field} or delete that ${kind}`,
      );
    }
    if (observed && holds(observed)) return false;
    try {
      const written = observed
        ? await kube.apply<KubeObject & OwnedObject>(
            resourcePath('v1', PLURAL[kind], namespace, name),
            {
              ...desired,
              metadata: { ...desired.metadata, resourceVersion: observed.metadata.resourceVersion },
            },
            true,
            signal,
          )
        : await kube.create<KubeObject & OwnedObject>(
            resourcePath('v1', PLURAL[kind], namespace),
            desired,
            signal,
          );
      if (written?.metadata) cache?.remember(written);
      return true;
    } catch (e) {
      if (!isConflict(e) || attempt >= WRITE_ATTEMPTS) throw e;
    }
  }
}
