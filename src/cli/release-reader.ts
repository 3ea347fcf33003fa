// Reads StaticExportReleases for the CLI, telling "no such release" from "no such resource type".
import { GROUP_VERSION } from '../crd/common.ts';
import { SER_PLURAL, type StaticExportRelease } from '../crd/static-export-release.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { usageError } from './exit-codes.ts';
import { kubeFailure } from './kube.ts';
import type { ReleaseRef } from './release-ref.ts';

export async function getRelease(kube: KubeClient, ref: ReleaseRef): Promise<StaticExportRelease> {
  const what = `get StaticExportRelease ${ref.namespace}/${ref.name}`;
  try {
    return await kube.get<StaticExportRelease>(
      resourcePath(GROUP_VERSION, SER_PLURAL, ref.namespace, ref.name),
    );
  } catch (error) {
    if (!isNotFound(error)) throw kubeFailure(error, what, kube.server);
  }
  // A 404 of the object or of its whole type: the collection tells which.
  await listReleases(kube, ref.namespace, 1);
  return Promise.reject(
    usageError(
      `no StaticExportRelease ${ref.namespace}/${ref.name}: check the namespace and name (static-export status -n ${ref.namespace} lists the releases there).`,
    ),
  );
}

/** The releases of `namespace` (all namespaces when undefined), sorted by namespace and name. */
export async function listReleases(
  kube: KubeClient,
  namespace: string | undefined,
  pageSize = 500,
): Promise<StaticExportRelease[]> {
  const where = namespace ? `in namespace ${namespace}` : 'in all namespaces';
  try {
    const list = await kube.list<StaticExportRelease>(
      resourcePath(GROUP_VERSION, SER_PLURAL, namespace),
      {},
      pageSize,
    );
    return list.items.sort((a, b) =>
      `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
        `${b.metadata.namespace}/${b.metadata.name}`,
      ),
    );
  } catch (error) {
    throw kubeFailure(error, `list StaticExportReleases ${where}`, kube.server);
  }
}
