// Target `valuesSecret`: the staticExport values as a YAML document in a Secret owned by the
// release (so it is garbage-collected with it). Helm (`--values` from the Secret), Flux
// (`valuesFrom`) and Argo CD plugins read it from there.

import { parse } from 'yaml';
import { GROUP_VERSION, SER_KIND, type StaticExportRelease } from '../crd/index.ts';
import { isConflict, isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import { renderValuesYaml, type StaticExportValues } from './values.ts';

export const MANAGED_BY = 'static-export-operator';
export const VERSION_ANNOTATION = 'staticexport.dev/version';
/**
 * The keys the site chart reads in existing-Secret mode (`staticExport.existingSecretKeys`), next to
 * the values document: `helm install --set staticExport.existingSecret=<name>` works as it is.
 */
export const CHART_KEYS = { bundleUrl: 'bundleUrl', version: 'version' } as const;

interface SecretObject {
  metadata: {
    name: string;
    resourceVersion?: string;
    namespace?: string;
    annotations?: Record<string, string>;
    ownerReferences?: { uid: string; controller?: boolean }[];
  };
  data?: Record<string, string>;
}

export class TargetError extends Error {
  override name = 'TargetError';
}

export interface ValuesSecretTarget {
  name: string;
  key: string;
}

/** What the target holds now, as far as this release is concerned. */
export interface ObservedValuesSecret {
  exists: boolean;
  ownedByRelease: boolean;
  resourceVersion?: string;
  values?: string;
  /** The staticExport.version the values carry. */
  version?: string;
  /** The chart's keys hold the link and version of the values document. */
  chartKeysMatch: boolean;
}

export async function observeValuesSecret(
  kube: KubeClient,
  release: StaticExportRelease,
  target: ValuesSecretTarget,
  signal?: AbortSignal,
): Promise<ObservedValuesSecret> {
  const path = resourcePath('v1', 'secrets', release.metadata.namespace, target.name);
  try {
    const secret = await kube.get<SecretObject>(path, signal);
    const raw = secret.data?.[target.key];
    const values = raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8');
    const version = values === undefined ? undefined : versionIn(values);
    const decoded = (key: string) => {
      const v = secret.data?.[key];
      return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
    };
    const chartKeysMatch =
      values !== undefined &&
      decoded(CHART_KEYS.version) === version &&
      decoded(CHART_KEYS.bundleUrl) === bundleUrlIn(values);
    return {
      chartKeysMatch,
      exists: true,
      ...(secret.metadata.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
      ownedByRelease: (secret.metadata.ownerReferences ?? []).some(
        (r) => r.uid === release.metadata.uid && r.controller,
      ),
      ...(values === undefined ? {} : { values }),
      ...(version === undefined ? {} : { version }),
    };
  } catch (e) {
    if (isNotFound(e)) return { exists: false, ownedByRelease: false, chartKeysMatch: false };
    throw e;
  }
}

const versionIn = (values: string) => staticExportField(values, 'version');
const bundleUrlIn = (values: string) => staticExportField(values, 'bundleUrl');

function staticExportField(values: string, field: 'version' | 'bundleUrl'): string | undefined {
  try {
    const v = (parse(values) as { staticExport?: Record<string, unknown> } | null)?.staticExport?.[field];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export function desiredValuesSecret(
  release: StaticExportRelease,
  target: ValuesSecretTarget,
  values: StaticExportValues,
) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: target.name,
      namespace: release.metadata.namespace,
      labels: {
        'app.kubernetes.io/managed-by': MANAGED_BY,
        'staticexport.dev/release': release.metadata.name ?? '',
      },
      annotations: { [VERSION_ANNOTATION]: values.version },
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
    },
    type: 'Opaque',
    // `data`, not `stringData`: server-side apply tracks stringData poorly (it is never stored).
    data: {
      [target.key]: Buffer.from(renderValuesYaml(values)).toString('base64'),
      [CHART_KEYS.bundleUrl]: Buffer.from(values.bundleUrl).toString('base64'),
      [CHART_KEYS.version]: Buffer.from(values.version).toString('base64'),
    },
  };
}

const WRITE_ATTEMPTS = 3;

/**
 * Writes the values unless the Secret already holds exactly them. Returns whether it wrote. Never
 * takes over a Secret it does not own: an absent one is created (POST: it fails if someone else
 * created it meanwhile), ours is updated only as last read (its resourceVersion as a precondition);
 * either conflict means look again, and refuse if it is no longer ours.
 */
export async function writeValuesSecret(
  kube: KubeClient,
  release: StaticExportRelease,
  target: ValuesSecretTarget,
  values: StaticExportValues,
  signal?: AbortSignal,
): Promise<boolean> {
  const namespace = release.metadata.namespace;
  const desired = desiredValuesSecret(release, target, values);
  for (let attempt = 1; ; attempt++) {
    const observed = await observeValuesSecret(kube, release, target, signal);
    if (observed.exists && !observed.ownedByRelease) {
      throw new TargetError(
        `Secret ${namespace}/${target.name} exists and is not managed by this StaticExportRelease: ` +
          'choose another spec.target.valuesSecret.name or delete that Secret',
      );
    }
    if (observed.values === renderValuesYaml(values) && observed.chartKeysMatch) return false;
    try {
      if (observed.exists) {
        await kube.apply(
          resourcePath('v1', 'secrets', namespace, target.name),
          { ...desired, metadata: { ...desired.metadata, resourceVersion: observed.resourceVersion } },
          true,
          signal,
        );
      } else {
        await kube.create(resourcePath('v1', 'secrets', namespace), desired, signal);
      }
      return true;
    } catch (e) {
      if (!isConflict(e) || attempt >= WRITE_ATTEMPTS) throw e;
    }
  }
}
