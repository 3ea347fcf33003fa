// Target `argoApplication`: the Application in Git reads the link from the values Secret
// (staticExport.existingSecret); the operator writes that Secret and sets the Helm parameter
// staticExport.version on the Application's source of the site chart (as Argo CD Image Updater's
// `argocd` write-back does), so Argo CD renders the new version and the pods roll. Limit: whoever
// applies the Application from Git (a parent app-of-apps, kubectl) resets the parameter on its next
// sync; docs/gitops.md#argo-cd-the-alternative-workload-annotation shows the alternative.

import { parse, stringify } from 'yaml';
import { defaultSecretName, type StaticExportRelease } from '../crd/index.ts';
import {
  FIELD_MANAGER,
  isConflict,
  isNotFound,
  KubeApiError,
  type KubeClient,
  resourcePath,
} from '../runtime/kube-client.ts';
import { TargetMisconfiguredError } from './owned.ts';
import type { Target, TargetContext } from './target.ts';
import type { StaticExportValues } from './values.ts';
import { observeValuesSecret, type ValuesSecretTarget, writeValuesSecret } from './values-secret.ts';

const APPLICATION_API = 'argoproj.io/v1alpha1';
const VERSION_PARAMETER = 'staticExport.version';
const SECRET_PARAMETER = 'staticExport.existingSecret';

interface HelmParameter {
  name: string;
  value?: string;
  forceString?: boolean;
}

interface ApplicationSource {
  repoURL?: string;
  chart?: string;
  path?: string;
  helm?: { parameters?: HelmParameter[]; values?: string; valuesObject?: Record<string, unknown> };
}

/** The fields of an Application this module reads. */
export interface ApplicationObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: { destination?: { namespace?: string }; source?: ApplicationSource; sources?: ApplicationSource[] };
}

interface ArgoNames {
  application: string;
  namespace: string;
  secret: string;
}

export function argoNames(release: StaticExportRelease): ArgoNames {
  const t = release.spec.target.argoApplication;
  return {
    application: t?.name ?? '',
    namespace: t?.namespace ?? release.metadata.namespace ?? '',
    secret: t?.secretName ?? defaultSecretName(release.metadata.name ?? ''),
  };
}

/** What the site chart's source must hold, as YAML to paste under it. */
function argoSnippet(names: ArgoNames): string {
  return stringify({
    helm: { valuesObject: { staticExport: { enabled: true, existingSecret: names.secret } } },
  }).trimEnd();
}

/** The existingSecret a source's Helm settings give (parameters win over values, as in Helm). */
function existingSecretOf(source: ApplicationSource): unknown {
  const param = source.helm?.parameters?.find((p) => p.name === SECRET_PARAMETER);
  if (param) return param.value;
  const fromValues = (v: unknown) =>
    (v as { staticExport?: { existingSecret?: unknown } } | null)?.staticExport?.existingSecret;
  const inObject = fromValues(source.helm?.valuesObject);
  if (inObject !== undefined) return inObject;
  try {
    return fromValues(parse(source.helm?.values ?? ''));
  } catch {
    return undefined;
  }
}

export type SiteSource = { path: string; source: ApplicationSource };

/**
 * The source of the site chart (the one whose Helm settings set staticExport.existingSecret to our
 * Secret; in a multi-source Application, that one of spec.sources), or why there is none. Pure.
 */
export function siteSource(
  releaseNamespace: string,
  names: ArgoNames,
  app: ApplicationObject | undefined,
): SiteSource | { problem: string } {
  const where = `Application ${names.namespace}/${names.application}`;
  if (!app)
    return {
      problem: `${where} (${APPLICATION_API}) does not exist: create it with, in the source of the static-export-site chart:\n${argoSnippet(names)}`,
    };
  const dest = app.spec?.destination?.namespace;
  if (dest !== releaseNamespace)
    return {
      problem: `${where} deploys into namespace ${dest ?? '(unset)'}, but the values Secret is in ${releaseNamespace}: set spec.destination.namespace to ${releaseNamespace} or put the StaticExportRelease in ${dest ?? 'its namespace'}`,
    };
  const candidates: SiteSource[] = app.spec?.sources
    ? app.spec.sources.map((source, i) => ({ path: `/spec/sources/${i}`, source }))
    : app.spec?.source
      ? [{ path: '/spec/source', source: app.spec.source }]
      : [];
  const found = candidates.filter((c) => existingSecretOf(c.source) === names.secret);
  if (found.length === 1 && found[0]) return found[0];
  if (found.length > 1)
    return {
      problem: `${where} has ${found.length} sources setting ${SECRET_PARAMETER} to ${names.secret}: keep it on the static-export-site chart's source only`,
    };
  return {
    problem: `${where} has no source setting ${SECRET_PARAMETER} to ${names.secret}; add to the source of the static-export-site chart:\n${argoSnippet(names)}`,
  };
}

/**
 * The JSON Patch that sets the version parameter on the site source (empty: it is set already).
 * The resourceVersion test makes it apply only to the Application as read. Pure.
 */
export function versionPatch(app: ApplicationObject, site: SiteSource, version: string): object[] {
  const params = site.source.helm?.parameters ?? [];
  const current = params.find((p) => p.name === VERSION_PARAMETER);
  if (current?.value === version && params.filter((p) => p.name === VERSION_PARAMETER).length === 1)
    return [];
  const next = [
    ...params.filter((p) => p.name !== VERSION_PARAMETER),
    { name: VERSION_PARAMETER, value: version, forceString: true },
  ];
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: app.metadata.resourceVersion },
    ...(site.source.helm ? [] : [{ op: 'add', path: `${site.path}/helm`, value: {} }]),
    { op: 'add', path: `${site.path}/helm/parameters`, value: next },
  ];
}

const appPath = (names: ArgoNames) =>
  resourcePath(APPLICATION_API, 'applications', names.namespace, names.application);

async function getApplication(kube: KubeClient, names: ArgoNames, signal?: AbortSignal) {
  try {
    return await kube.get<ApplicationObject>(appPath(names), signal);
  } catch (e) {
    // No Application CRD (Argo CD not installed) reads as a missing Application too.
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function locate(kube: KubeClient, release: StaticExportRelease, signal?: AbortSignal) {
  const names = argoNames(release);
  const app = await getApplication(kube, names, signal);
  return { names, app, site: siteSource(release.metadata.namespace ?? '', names, app) };
}

/** The misconfiguration message, if any (read once per reconcile; Applications are not watched). */
async function checkArgo(
  kube: KubeClient,
  release: StaticExportRelease,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { site } = await locate(kube, release, signal);
  return 'problem' in site ? site.problem : undefined;
}

const secretTarget = (names: ArgoNames): ValuesSecretTarget => ({
  name: names.secret,
  key: 'values.yaml',
  field: 'spec.target.argoApplication.secretName',
});

/** The version the Secret and the Application's parameter agree on (undefined: they do not). */
async function argoVersion(
  kube: KubeClient,
  release: StaticExportRelease,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { names, site } = await locate(kube, release, signal);
  const secret = await observeValuesSecret(kube, release, secretTarget(names), signal);
  if ('problem' in site || !secret.ownedByRelease || !secret.chartKeysMatch) return undefined;
  const param = site.source.helm?.parameters?.find((p) => p.name === VERSION_PARAMETER);
  return param?.value === secret.version ? secret.version : undefined;
}

const PATCH_ATTEMPTS = 3;

/** Writes the Secret, then the version parameter. Returns whether anything was written. */
async function writeArgo(
  kube: KubeClient,
  release: StaticExportRelease,
  values: StaticExportValues,
  signal?: AbortSignal,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const { names, app, site } = await locate(kube, release, signal);
    if ('problem' in site || !app) throw new TargetMisconfiguredError('problem' in site ? site.problem : '');
    // The link first: pods the new version starts must find a link that serves it.
    const wroteSecret = await writeValuesSecret(kube, release, secretTarget(names), values, signal);
    const patch = versionPatch(app, site, values.version);
    if (!patch.length) return wroteSecret;
    try {
      await kube.request('PATCH', appPath(names), {
        body: patch,
        contentType: 'application/json-patch+json',
        query: { fieldManager: FIELD_MANAGER },
        ...(signal ? { signal } : {}),
      });
      return true;
    } catch (e) {
      // A failed `test` (changed since read) is 422 or 409: read again.
      const changed = isConflict(e) || (e instanceof KubeApiError && e.status === 422);
      if (!changed || attempt >= PATCH_ATTEMPTS) throw e;
    }
  }
}

/** spec.target.argoApplication: a values Secret and the Application's version parameter. */
export function argoTarget({ kube, release }: TargetContext): Target | undefined {
  if (!release.spec.target.argoApplication) return undefined;
  return {
    problem: (signal) => checkArgo(kube, release, signal),
    version: (signal) => argoVersion(kube, release, signal),
    write: (values, _now, signal) => writeArgo(kube, release, values, signal),
  };
}
