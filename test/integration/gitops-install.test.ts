// The GitOps installs of the tool itself (examples/flux/install, examples/argocd/install) applied as
// they are to a real API server with the real Flux OCIRepository, HelmRelease, Alert and Provider
// and Argo CD Application CRDs; the charts and versions they name are the ones a release publishes,
// and their values pass the charts' schemas.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createNamespace, kubectl, kubectlOk, ROOT } from '../support/cluster/kube.ts';
import { A_VERSION, helmTemplate, merge } from '../support/tools/chart.ts';
import {
  applyObjects,
  example,
  GITOPS_CRDS,
  installGitopsCrd,
  type KubeDoc,
} from '../support/tools/gitops.ts';

let namespaces: Record<string, string>;

beforeAll(async () => {
  await Promise.all(
    (Object.keys(GITOPS_CRDS) as (keyof typeof GITOPS_CRDS)[]).map((crd) => installGitopsCrd(crd)),
  );
  namespaces = {
    docs: await createNamespace('docs'),
    'flux-system': await createNamespace('flux-system'),
    argocd: await createNamespace('argocd'),
  };
});

const FILES = [
  'flux/install/operator.yaml',
  'flux/install/site.yaml',
  'flux/install/alert.yaml',
  'argocd/install/operator.yaml',
];
const RELEASE_REGISTRY = 'ghcr.io/static-export-operator';
const chartVersion = (chart: string) =>
  (parse(readFileSync(join(ROOT, 'charts', chart, 'Chart.yaml'), 'utf8')) as { version: string }).version;
const objectsOf = (file: string) => example(file, namespaces);

/** The fields these tests read, of any of the examples' objects. */
interface Doc extends KubeDoc {
  metadata: KubeDoc['metadata'] & { labels?: Record<string, string> };
  spec: {
    url?: string;
    ref?: unknown;
    chartRef?: unknown;
    values?: Record<string, unknown>;
    valuesFrom?: unknown;
    eventSources?: unknown;
    providerRef?: { name: string };
    source?: { repoURL: string; chart: string; targetRevision: string; helm: { valuesObject: object } };
    target?: { fluxHelmRelease: { name: string; secretName: string; configMapName: string } };
  };
  stringData?: Record<string, string>;
}

/** The one object of `kind` in the example `file`. */
function one(file: string, kind: string): Doc {
  const found = objectsOf(file).filter((o) => o.kind === kind);
  expect(found, `${file}: one ${kind}`).toHaveLength(1);
  return found[0] as Doc;
}

describe('GitOps installs of the operator and the site', () => {
  it.each(FILES)('%s: the real CRDs accept every object as it is', async (file) => {
    const objects = objectsOf(file);
    expect(objects.length).toBeGreaterThan(0);
    await applyObjects(objects);
    for (const o of objects) {
      const seen = JSON.parse(
        await kubectlOk(['get', o.kind, o.metadata.name, '-n', o.metadata.namespace ?? '', '-o', 'json']),
      ) as { spec?: unknown };
      // Nothing pruned: a field the schema does not know would be dropped silently.
      if (o.spec) expect(seen.spec).toMatchObject(o.spec as object);
    }
  });

  it("Flux pulls the release's OCI charts, at the charts' version, and the HelmReleases install them", () => {
    for (const [file, chart] of [
      ['flux/install/operator.yaml', 'static-export-operator'],
      ['flux/install/site.yaml', 'static-export-site'],
    ] as const) {
      const source = one(file, 'OCIRepository');
      expect(source.spec.url).toBe(`oci://${RELEASE_REGISTRY}/${chart}`);
      expect(source.spec.ref).toEqual({ tag: chartVersion(chart) });
      const helmRelease = one(file, 'HelmRelease');
      expect(helmRelease.spec.chartRef).toEqual({ kind: 'OCIRepository', name: source.metadata.name });
      expect(helmRelease.metadata.namespace).toBe(source.metadata.namespace);
    }
    // The site's HelmRelease is what ../static-export-release.yaml names as its fluxHelmRelease target.
    const [release] = example('flux/static-export-release.yaml', {}) as Doc[];
    const site = one('flux/install/site.yaml', 'HelmRelease');
    const target = release?.spec.target?.fluxHelmRelease;
    if (!target) throw new Error('flux/static-export-release.yaml has no fluxHelmRelease target');
    expect(site.metadata.name).toBe(target.name);
    expect(site.spec.values).toEqual({ staticExport: { enabled: true, existingSecret: target.secretName } });
    expect(site.spec.valuesFrom).toEqual([
      {
        kind: 'ConfigMap',
        name: target.configMapName,
        valuesKey: 'version',
        targetPath: 'staticExport.version',
      },
    ]);
  });

  it('Argo CD pulls the operator chart through an OCI-enabled Helm repository', () => {
    const repository = one('argocd/install/operator.yaml', 'Secret');
    const application = one('argocd/install/operator.yaml', 'Application');
    const source = application.spec.source;
    expect(repository.metadata.labels).toEqual({ 'argocd.argoproj.io/secret-type': 'repository' });
    expect(repository.stringData).toMatchObject({ type: 'helm', url: RELEASE_REGISTRY, enableOCI: 'true' });
    expect(source).toMatchObject({
      repoURL: RELEASE_REGISTRY,
      chart: 'static-export-operator',
      targetRevision: chartVersion('static-export-operator'),
    });
  });

  it("the values they give pass the charts' schemas and render, with global.imageRegistry too", async () => {
    const operatorFlux = one('flux/install/operator.yaml', 'HelmRelease');
    const siteFlux = one('flux/install/site.yaml', 'HelmRelease');
    const operatorArgo = one('argocd/install/operator.yaml', 'Application');
    const argoValues = operatorArgo.spec.source?.helm.valuesObject;
    for (const [chart, values] of [
      ['static-export-operator', operatorFlux.spec.values],
      ['static-export-operator', argoValues],
      // The version the ConfigMap gives through valuesFrom.
      ['static-export-site', merge(siteFlux.spec.values ?? {}, { staticExport: { version: A_VERSION } })],
    ] as const) {
      for (const extra of [{}, { global: { imageRegistry: 'registry.internal:5000' } }]) {
        const rendered = await helmTemplate('helm4', merge(values ?? {}, extra), 'x', {
          chart: join(ROOT, 'charts', chart),
        });
        expect(rendered.code, `${chart}: ${rendered.stderr}`).toBe(0);
      }
    }
  });

  it("each Alert's Provider is in the file, in the Alert's namespace (the only one it may name)", () => {
    const objects = objectsOf('flux/install/alert.yaml') as Doc[];
    const providers = objects
      .filter((o) => o.kind === 'Provider')
      .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    const alerts = objects.filter((o) => o.kind === 'Alert');
    expect(alerts.length).toBeGreaterThan(0);
    for (const alert of alerts) {
      expect(providers).toContain(`${alert.metadata.namespace}/${alert.spec.providerRef?.name}`);
    }
  });

  it('an Alert takes only Flux kinds as event sources: the real CRD refuses a StaticExportRelease', async () => {
    const alert = objectsOf('flux/install/alert.yaml').find((o) => o.kind === 'Alert') as Doc;
    const refused = await kubectl(
      ['apply', '--dry-run=server', '-f', '-'],
      JSON.stringify({
        ...alert,
        metadata: { ...alert.metadata, name: 'on-the-release' },
        spec: { ...alert.spec, eventSources: [{ kind: 'StaticExportRelease', name: 'docs' }] },
      }),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/spec\.eventSources\[0\]\.kind: Unsupported value: "StaticExportRelease"/);
  });
});
