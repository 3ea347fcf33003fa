// examples/git-write-back/ against the real CRDs (ours, Flux's HelmRelease v2, Argo CD's
// Application v1alpha1): every object is taken by the API server as it is, the Argo CD override
// file is a valid spec.source of the Application, and each file names what the others expect.
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createNamespace, installCrds, kubectl, kubectlOk, ROOT } from '../support/cluster/kube.ts';
import { example, installGitopsCrd, type KubeDoc } from '../support/tools/gitops.ts';

let ns: string;
beforeAll(async () => {
  await installCrds();
  await installGitopsCrd('helmRelease');
  await installGitopsCrd('application');
  ns = await createNamespace('git-examples');
});
afterAll(async () => {
  await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
});

const DIR = 'git-write-back';
const names = () => ({ docs: ns, argocd: ns });
const objects = (file: string) => example(`${DIR}/${file}`, names());
/** The fields these checks read of a release, an Application and a HelmRelease. */
interface Example extends KubeDoc {
  spec: {
    gitWriteBack: { url: string; path: string; field?: string; secretRef: { name: string } };
    source: { repoURL: string; path: string; helm: Record<string, unknown> };
    valuesFrom: Record<string, unknown>[];
  };
}
const one = (file: string) => objects(file)[0] as Example;
const text = (file: string) => readFileSync(join(ROOT, 'examples', DIR, file), 'utf8');

async function dryRun(obj: object): Promise<string> {
  const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(obj));
  return r.code === 0 ? '' : r.stderr;
}

describe('examples/git-write-back', () => {
  it('every object is accepted by the API server as it is', async () => {
    for (const file of [
      'git-credentials.yaml',
      'flux/static-export-release.yaml',
      'flux/helmrelease.yaml',
      'argocd/static-export-release.yaml',
      'argocd/application.yaml',
    ])
      for (const obj of objects(file)) expect(await dryRun(obj), file).toBe('');
  });

  it("Argo CD: the release writes the override file of the Application's source directory, a valid source", async () => {
    const release = one('argocd/static-export-release.yaml');
    const app = one('argocd/application.yaml');
    const path: string = release.spec.gitWriteBack.path;
    expect(basename(path)).toBe(`.argocd-source-${app.metadata.name}.yaml`);
    expect(dirname(path)).toBe(app.spec.source.path);
    expect(release.spec.gitWriteBack.url).toBe(app.spec.source.repoURL);
    expect(app.spec.source.helm.parameters).toBeUndefined();
    // Argo CD applies the file over the source: with it, the source must still be a valid one.
    const override = parse(text(`argocd/${path}`)) as { helm: Record<string, unknown> };
    expect(override.helm.parameters).toEqual([
      {
        name: release.spec.gitWriteBack.field ?? 'staticExport.version',
        value: expect.any(String),
        forceString: true,
      },
    ]);
    const merged = {
      ...app,
      spec: {
        ...app.spec,
        source: { ...app.spec.source, helm: { ...app.spec.source.helm, ...override.helm } },
      },
    };
    expect(await dryRun(merged)).toBe('');
    // And a wrong shape is refused by the same CRD: the check can fail.
    const wrong = {
      ...merged,
      spec: { ...merged.spec, source: { ...merged.spec.source, helm: { parameters: 'x' } } },
    };
    expect(await dryRun(wrong)).toMatch(/parameters/);
  });

  it('Flux: the values file the release writes is the one kustomize builds into the ConfigMap the HelmRelease reads first', () => {
    const release = one('flux/static-export-release.yaml');
    const helmRelease = one('flux/helmrelease.yaml');
    const kustomization = parse(text('flux/kustomization.yaml')) as {
      configMapGenerator: { name: string; files: string[] }[];
      configurations: string[];
    };
    const [generator] = kustomization.configMapGenerator;
    expect(generator?.files).toEqual([basename(release.spec.gitWriteBack.path)]);
    expect(helmRelease.spec.valuesFrom[0]).toEqual({
      kind: 'ConfigMap',
      name: generator?.name,
      valuesKey: 'values.yaml',
    });
    // The operator's own version ConfigMap comes after, so the version served wins.
    expect(helmRelease.spec.valuesFrom[1]).toMatchObject({
      name: 'docs-version',
      targetPath: 'staticExport.version',
    });
    const values = parse(text('flux/values.yaml')) as Record<string, Record<string, unknown>>;
    const [top, key] = (release.spec.gitWriteBack.field ?? 'staticExport.version').split('.') as [
      string,
      string,
    ];
    expect(values[top]?.[key]).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(parse(text('flux/kustomizeconfig.yaml')).nameReference[0].fieldSpecs).toEqual([
      { path: 'spec/valuesFrom/name', kind: 'HelmRelease' },
    ]);
  });

  it("both releases name the Secret of git-credentials.yaml, which has Flux's HTTPS keys", () => {
    const [secret] = objects('git-credentials.yaml') as [KubeDoc & { stringData: Record<string, string> }];
    expect(Object.keys(secret.stringData).sort()).toEqual(['password', 'username']);
    for (const file of ['flux/static-export-release.yaml', 'argocd/static-export-release.yaml'])
      expect(one(file).spec.gitWriteBack.secretRef.name, file).toBe(secret.metadata.name);
  });
});
