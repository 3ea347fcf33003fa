// Target `fluxHelmRelease`: the HelmRelease in Git reads the link from the values Secret
// (staticExport.existingSecret) and the version from a ConfigMap (valuesFrom, targetPath
// staticExport.version). The operator writes those two objects, both labelled for
// helm-controller's watch, and asks older controllers to reconcile with the requestedAt
// annotation. It never changes the HelmRelease's spec: Flux owns that, from Git.

import { stringify } from 'yaml';
import { defaultConfigMapName, defaultSecretName, type StaticExportRelease } from '../crd/index.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import {
  getOwnable,
  isOwnedBy,
  type OwnedObject,
  ownedMetadata,
  TargetMisconfiguredError,
  writeOwned,
} from './owned.ts';
import type { Target, TargetContext } from './target.ts';
import type { StaticExportValues } from './values.ts';
import { observeValuesSecret, type ValuesSecretTarget, writeValuesSecret } from './values-secret.ts';

const HELM_RELEASE_API = 'helm.toolkit.fluxcd.io/v2';
/** helm-controller (v1.1+) reconciles a HelmRelease at once when a valuesFrom object so labelled changes. */
const FLUX_WATCH_LABEL = { 'reconcile.fluxcd.io/watch': 'Enabled' } as const;
/** Any new value asks a Flux controller to reconcile now (all versions honour it). */
const FLUX_REQUESTED_AT = 'reconcile.fluxcd.io/requestedAt';
/** The ConfigMap's key holding the version. */
const VERSION_KEY = 'version';
const VERSION_TARGET_PATH = 'staticExport.version';

interface FluxNames {
  helmRelease: string;
  secret: string;
  configMap: string;
}

export function fluxNames(release: StaticExportRelease): FluxNames {
  const t = release.spec.target.fluxHelmRelease;
  const name = release.metadata.name ?? '';
  return {
    helmRelease: t?.name ?? '',
    secret: t?.secretName ?? defaultSecretName(name),
    configMap: t?.configMapName ?? defaultConfigMapName(name),
  };
}

/** The fields of a HelmRelease this module reads. */
export interface HelmReleaseObject {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  spec?: {
    targetNamespace?: string;
    values?: { staticExport?: { existingSecret?: unknown } };
    valuesFrom?: { kind?: string; name?: string; valuesKey?: string; targetPath?: string }[];
  };
}

/** What the HelmRelease in Git must hold, as YAML to paste under its `spec`. */
function fluxSnippet(names: FluxNames): string {
  return stringify({
    values: { staticExport: { enabled: true, existingSecret: names.secret } },
    valuesFrom: [
      { kind: 'ConfigMap', name: names.configMap, valuesKey: VERSION_KEY, targetPath: VERSION_TARGET_PATH },
    ],
  }).trimEnd();
}

/** Why the HelmRelease cannot serve what the operator writes (undefined: it can). Pure. */
export function fluxMisconfiguration(
  namespace: string,
  names: FluxNames,
  hr: HelmReleaseObject | undefined,
): string | undefined {
  const where = `HelmRelease ${namespace}/${names.helmRelease}`;
  const add = `; add to its spec:\n${fluxSnippet(names)}`;
  if (!hr)
    return `${where} (${HELM_RELEASE_API}) does not exist: create it with, in its spec:\n${fluxSnippet(names)}`;
  const target = hr.spec?.targetNamespace;
  if (target && target !== namespace)
    return `${where} installs into namespace ${target}, but the values Secret is in ${namespace}: put the StaticExportRelease in ${target} or remove spec.targetNamespace`;
  const missing: string[] = [];
  if (hr.spec?.values?.staticExport?.existingSecret !== names.secret)
    missing.push(`spec.values.staticExport.existingSecret is not ${names.secret}`);
  const readsVersion = (hr.spec?.valuesFrom ?? []).some(
    (v) =>
      v.kind === 'ConfigMap' &&
      v.name === names.configMap &&
      (v.valuesKey ?? 'values.yaml') === VERSION_KEY &&
      v.targetPath === VERSION_TARGET_PATH,
  );
  if (!readsVersion)
    missing.push(
      `spec.valuesFrom has no entry reading key ${VERSION_KEY} of ConfigMap ${names.configMap} into ${VERSION_TARGET_PATH}`,
    );
  return missing.length
    ? `${where} does not read what the operator writes: ${missing.join('; ')}${add}`
    : undefined;
}

async function getHelmRelease(
  kube: KubeClient,
  namespace: string,
  name: string,
  signal?: AbortSignal,
): Promise<HelmReleaseObject | undefined> {
  try {
    return await kube.get<HelmReleaseObject>(
      resourcePath(HELM_RELEASE_API, 'helmreleases', namespace, name),
      signal,
    );
  } catch (e) {
    // No HelmRelease CRD (Flux not installed) reads as a missing HelmRelease too.
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function observeFlux(kube: KubeClient, release: StaticExportRelease, signal?: AbortSignal) {
  const namespace = release.metadata.namespace ?? '';
  const names = fluxNames(release);
  const hr = await getHelmRelease(kube, namespace, names.helmRelease, signal);
  return { names, hr, problem: fluxMisconfiguration(namespace, names, hr) };
}

/** The misconfiguration message, if any (read once per reconcile; HelmReleases are not watched). */
async function checkFlux(
  kube: KubeClient,
  release: StaticExportRelease,
  signal?: AbortSignal,
): Promise<string | undefined> {
  return (await observeFlux(kube, release, signal)).problem;
}

/**
 * On the ConfigMap: the requestedAt its version asked the HelmRelease for. Kept with the version,
 * so a request that failed after the version was written is made at the next write.
 */
const REQUESTED_FOR_VERSION = 'staticexport.dev/reconcile-requested-at';

/** Whether the HelmRelease has yet to get `wanted` (a later request, e.g. `flux reconcile`, counts). Pure. */
export function requestPending(current: string | undefined, wanted: string): boolean {
  if (current === undefined) return true;
  const [c, w] = [Date.parse(current), Date.parse(wanted)];
  return Number.isNaN(c) || Number.isNaN(w) ? current !== wanted : c < w;
}

const secretTarget = (names: FluxNames): ValuesSecretTarget => ({
  name: names.secret,
  key: 'values.yaml',
  labels: FLUX_WATCH_LABEL,
  field: 'spec.target.fluxHelmRelease.secretName',
});

const versionIn = (cm: OwnedObject | undefined) => cm?.data?.[VERSION_KEY];

/** The version both objects hold, if they agree and are ours (undefined: absent, edited or not ours). */
async function fluxVersion(
  kube: KubeClient,
  release: StaticExportRelease,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const names = fluxNames(release);
  const [secret, cm] = await Promise.all([
    observeValuesSecret(kube, release, secretTarget(names), signal),
    getOwnable(kube, 'ConfigMap', release.metadata.namespace ?? '', names.configMap, signal),
  ]);
  if (!secret.ownedByRelease || !secret.chartKeysMatch || !cm || !isOwnedBy(release, cm)) return undefined;
  return versionIn(cm) === secret.version ? secret.version : undefined;
}

/**
 * Writes the Secret (link) and the ConfigMap (version); when the version changed, sets requestedAt
 * on the HelmRelease (metadata only). Refuses a HelmRelease that does not read them. Returns
 * whether anything was written.
 */
async function writeFlux(
  kube: KubeClient,
  release: StaticExportRelease,
  values: StaticExportValues,
  now: Date,
  signal?: AbortSignal,
): Promise<boolean> {
  const namespace = release.metadata.namespace ?? '';
  const { names, hr, problem } = await observeFlux(kube, release, signal);
  if (problem) throw new TargetMisconfiguredError(problem);
  // The link first: pods the new version starts must find a link that serves it.
  const wroteSecret = await writeValuesSecret(kube, release, secretTarget(names), values, signal);
  const seen = await getOwnable(kube, 'ConfigMap', namespace, names.configMap, signal);
  const wanted =
    versionIn(seen) === values.version
      ? seen?.metadata.annotations?.[REQUESTED_FOR_VERSION]
      : now.toISOString();
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: ownedMetadata(
      release,
      names.configMap,
      FLUX_WATCH_LABEL,
      wanted ? { [REQUESTED_FOR_VERSION]: wanted } : {},
    ),
    data: { [VERSION_KEY]: values.version },
  };
  const wroteVersion = await writeOwned(
    kube,
    release,
    'ConfigMap',
    cm,
    (o) =>
      versionIn(o) === values.version &&
      o.metadata.annotations?.[REQUESTED_FOR_VERSION] === wanted &&
      Object.entries(FLUX_WATCH_LABEL).every(([k, v]) => o.metadata.labels?.[k] === v),
    'spec.target.fluxHelmRelease.configMapName',
    signal,
  );
  // For helm-controllers older than the watch label: ask for a reconcile once per version.
  if (wanted && requestPending(hr?.metadata.annotations?.[FLUX_REQUESTED_AT], wanted)) {
    await kube.mergePatch(resourcePath(HELM_RELEASE_API, 'helmreleases', namespace, names.helmRelease), {
      metadata: { annotations: { [FLUX_REQUESTED_AT]: wanted } },
    });
  }
  return wroteSecret || wroteVersion;
}

/** spec.target.fluxHelmRelease: a values Secret and a version ConfigMap that helm-controller reads. */
export function fluxTarget({ kube, release }: TargetContext): Target | undefined {
  if (!release.spec.target.fluxHelmRelease) return undefined;
  return {
    problem: (signal) => checkFlux(kube, release, signal),
    version: (signal) => fluxVersion(kube, release, signal),
    write: (values, now, signal) => writeFlux(kube, release, values, now, signal),
  };
}
