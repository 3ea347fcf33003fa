// Target `valuesSecret`: the staticExport values as a YAML document in a Secret owned by the
// release (so it is garbage-collected with it). Helm (`--values` from the Secret), Flux
// (`valuesFrom`) and Argo CD plugins read it from there. The GitOps targets write the same Secret.

import { parse } from 'yaml';
import type { StaticExportRelease } from '../crd/index.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import { CHART_KEYS } from './chart-keys.ts';
import {
  getOwnable,
  isOwnedBy,
  type OwnedCache,
  type OwnedObject,
  ownedMetadata,
  writeOwned,
} from './owned.ts';
import type { Target, TargetContext } from './target.ts';
import { renderValuesYaml, type StaticExportValues } from './values.ts';

export { CHART_KEYS } from './chart-keys.ts';
export { MANAGED_BY, TargetError } from './owned.ts';
export const VERSION_ANNOTATION = 'staticexport.dev/version';

export interface ValuesSecretTarget {
  name: string;
  key: string;
  /** Extra labels (a GitOps tool's watch label). */
  labels?: Record<string, string>;
  /** The spec field naming the Secret, for errors (default spec.target.valuesSecret.name). */
  field?: string;
}

/** What the target holds now, as far as this release is concerned. */
interface ObservedValuesSecret {
  exists: boolean;
  ownedByRelease: boolean;
  resourceVersion?: string;
  values?: string;
  /** The staticExport.version the values carry. */
  version?: string;
  /** The chart's keys hold the link and version of the values document. */
  chartKeysMatch: boolean;
}

function inspect(release: StaticExportRelease, target: ValuesSecretTarget, secret: OwnedObject) {
  const decoded = (key: string) => {
    const v = secret.data?.[key];
    return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
  };
  const values = decoded(target.key);
  const { version, bundleUrl } = values === undefined ? {} : staticExportFields(values);
  const chartKeysMatch =
    values !== undefined &&
    decoded(CHART_KEYS.version) === version &&
    decoded(CHART_KEYS.bundleUrl) === bundleUrl;
  const labelled = Object.entries(target.labels ?? {}).every(([k, v]) => secret.metadata.labels?.[k] === v);
  return {
    chartKeysMatch,
    labelled,
    exists: true,
    ...(secret.metadata.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
    ownedByRelease: isOwnedBy(release, secret),
    ...(values === undefined ? {} : { values }),
    ...(version === undefined ? {} : { version }),
  };
}

/** With `cache`, read from the operator's cache of Secrets where it is known current. */
export async function observeValuesSecret(
  kube: KubeClient,
  release: StaticExportRelease,
  target: ValuesSecretTarget,
  signal?: AbortSignal,
  cache?: OwnedCache,
): Promise<ObservedValuesSecret> {
  const secret = await getOwnable(
    kube,
    'Secret',
    release.metadata.namespace ?? '',
    target.name,
    signal,
    cache,
  );
  if (!secret) return { exists: false, ownedByRelease: false, chartKeysMatch: false };
  const { labelled: _, ...observed } = inspect(release, target, secret);
  return observed;
}

/** The version and link a values document carries (each absent unless a string); one parse for both. */
function staticExportFields(values: string): { version?: string; bundleUrl?: string } {
  let block: Record<string, unknown> | undefined;
  try {
    block = (parse(values) as { staticExport?: Record<string, unknown> } | null)?.staticExport;
  } catch {
    return {};
  }
  const { version, bundleUrl } = block ?? {};
  return {
    ...(typeof version === 'string' ? { version } : {}),
    ...(typeof bundleUrl === 'string' ? { bundleUrl } : {}),
  };
}

function desiredValuesSecret(
  release: StaticExportRelease,
  target: ValuesSecretTarget,
  values: StaticExportValues,
  rendered: string,
) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: ownedMetadata(release, target.name, target.labels, { [VERSION_ANNOTATION]: values.version }),
    type: 'Opaque',
    // `data`, not `stringData`: server-side apply tracks stringData poorly (it is never stored).
    data: {
      [target.key]: Buffer.from(rendered).toString('base64'),
      [CHART_KEYS.bundleUrl]: Buffer.from(values.bundleUrl).toString('base64'),
      [CHART_KEYS.version]: Buffer.from(values.version).toString('base64'),
      ...(values.ociReference
        ? { [CHART_KEYS.ociReference]: Buffer.from(values.ociReference).toString('base64') }
        : {}),
    },
  };
}

/** Writes the values unless the Secret already holds exactly them (see writeOwned). Returns whether it wrote. */
export function writeValuesSecret(
  kube: KubeClient,
  release: StaticExportRelease,
  target: ValuesSecretTarget,
  values: StaticExportValues,
  signal?: AbortSignal,
  cache?: OwnedCache,
): Promise<boolean> {
  const rendered = renderValuesYaml(values);
  return writeOwned(
    kube,
    release,
    'Secret',
    desiredValuesSecret(release, target, values, rendered),
    (secret) => {
      const seen = inspect(release, target, secret);
      return seen.values === rendered && seen.chartKeysMatch && seen.labelled;
    },
    target.field ?? 'spec.target.valuesSecret.name',
    signal,
    cache,
  );
}

/** spec.target.valuesSecret: the Secret the site chart reads (the operator rolls its workloads). */
export function valuesSecretTarget({ kube, release, secrets }: TargetContext): Target | undefined {
  const spec = release.spec.target.valuesSecret;
  if (!spec) return undefined;
  const target = { name: spec.name, key: spec.key };
  return {
    problem: async () => undefined,
    async version(signal) {
      const observed = await observeValuesSecret(kube, release, target, signal, secrets);
      return observed.ownedByRelease && observed.chartKeysMatch ? observed.version : undefined;
    },
    write: (values, _now, signal) => writeValuesSecret(kube, release, target, values, signal, secrets),
  };
}
