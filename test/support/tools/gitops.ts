// The GitOps tools' real CRDs (Flux's HelmRelease v2, OCIRepository v1, Alert and Provider v1beta3,
// Argo CD's Application v1alpha1), as each project generates and ships them in its Go module
// (scripts/go-tools fetches and caches them), and the examples under examples/ as tests apply them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectlOk, ROOT } from '../cluster/kube.ts';
import { goTool } from './go-tools.ts';

export const GITOPS_CRDS = {
  helmRelease: { tool: 'flux-helmrelease-crd', name: 'helmreleases.helm.toolkit.fluxcd.io' },
  ociRepository: { tool: 'flux-ocirepository-crd', name: 'ocirepositories.source.toolkit.fluxcd.io' },
  alert: { tool: 'flux-alert-crd', name: 'alerts.notification.toolkit.fluxcd.io' },
  provider: { tool: 'flux-provider-crd', name: 'providers.notification.toolkit.fluxcd.io' },
  application: { tool: 'argo-application-crd', name: 'applications.argoproj.io' },
} as const;

/** Installs one of the real CRDs (server-side: Argo CD's is too large for the last-applied annotation). */
export async function installGitopsCrd(which: keyof typeof GITOPS_CRDS): Promise<void> {
  const { tool, name } = GITOPS_CRDS[which];
  await kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', await goTool(tool)]);
  // Polled: `kubectl wait` fails outright on a CRD the API server has not given conditions yet.
  await eventually(`CRD ${name} established`, async () => {
    const status = await kubectlOk([
      ...['get', 'crd', name, '-o'],
      'jsonpath={.status.conditions[?(@.type=="Established")].status}',
    ]);
    return status === 'True';
  });
}

export type KubeDoc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
};

/** The objects of an example file, with its namespaces mapped (e.g. docs -> the test's). */
export function example(path: string, namespaces: Record<string, string>): KubeDoc[] {
  const text = readFileSync(join(ROOT, 'examples', path), 'utf8');
  const docs = parseAllDocuments(text).map((d) => d.toJS() as KubeDoc);
  const mapNs = (ns: string | undefined) => (ns === undefined ? ns : (namespaces[ns] ?? ns));
  return JSON.parse(
    JSON.stringify(docs, (key, value) =>
      key === 'namespace' && typeof value === 'string' ? mapNs(value) : value,
    ),
  ) as KubeDoc[];
}

export async function applyObjects(objects: object[]): Promise<void> {
  for (const o of objects) await kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
}

/** The fields of any object these tests read (managed fields included). */
export interface Seen {
  metadata: {
    name: string;
    generation?: number;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { name: string; controller?: boolean }[];
    managedFields?: { manager: string; fieldsV1?: unknown; operation: string }[];
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

export const getObject = async (kind: string, name: string, namespace: string) =>
  JSON.parse(
    await kubectlOk(['get', kind, name, '-n', namespace, '-o', 'json', '--show-managed-fields']),
  ) as Seen;

export const decode = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');

export const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

/** The object minus what the API server changes on any write (and `also`, e.g. annotations). */
export function withoutVolatile(o: Seen, also: string[] = []): Seen {
  const drop = new Set(['resourceVersion', 'managedFields', ...also]);
  return {
    ...o,
    metadata: Object.fromEntries(
      Object.entries(o.metadata).filter(([k]) => !drop.has(k)),
    ) as Seen['metadata'],
  };
}

/** Neither the link nor its signature (query) appears in any of `places` (name -> text). */
export function linkNowhereIn(link: string, places: Record<string, string>): void {
  expect(link).toMatch(/\?./);
  const query = link.slice(link.indexOf('?'));
  for (const [where, text] of Object.entries(places)) {
    expect(text.includes(link), where).toBe(false);
    expect(text.includes(query), where).toBe(false);
  }
}
