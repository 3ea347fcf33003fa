// The pure decisions of the Flux and Argo CD targets: whether the object reads what the operator
// writes (and the message when not), and the one change made to an Application.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import {
  type ApplicationObject,
  argoNames,
  siteSource,
  versionPatch,
} from '../../../src/targets/argo-application.ts';
import {
  fluxMisconfiguration,
  fluxNames,
  type HelmReleaseObject,
  requestPending,
} from '../../../src/targets/flux-helm-release.ts';

const release = (target: object): StaticExportRelease =>
  ({
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: { name: 'docs', namespace: 'web', uid: 'u' },
    spec: { target },
  }) as unknown as StaticExportRelease;

describe('fluxHelmRelease', () => {
  const names = fluxNames(release({ fluxHelmRelease: { name: 'site' } }));
  const good: HelmReleaseObject = {
    metadata: { name: 'site' },
    spec: {
      values: { staticExport: { existingSecret: 'docs-values' } },
      valuesFrom: [
        { kind: 'ConfigMap', name: 'docs-version', valuesKey: 'version', targetPath: 'staticExport.version' },
      ],
    },
  };

  it('defaults the Secret and ConfigMap names from the release', () => {
    expect(names).toEqual({ helmRelease: 'site', secret: 'docs-values', configMap: 'docs-version' });
    expect(
      fluxNames(release({ fluxHelmRelease: { name: 'site', secretName: 's', configMapName: 'c' } })),
    ).toEqual({ helmRelease: 'site', secret: 's', configMap: 'c' });
  });

  it('asks for a reconcile until the HelmRelease has this request or a later one', () => {
    const wanted = '2026-11-22T14:00:00.000Z';
    expect(requestPending(undefined, wanted)).toBe(true);
    expect(requestPending('2026-11-22T13:00:00.000Z', wanted)).toBe(true);
    expect(requestPending(wanted, wanted)).toBe(false);
    // `flux reconcile` writes RFC 3339 with its own zone and nanoseconds.
    expect(requestPending('2026-11-22T15:30:00.123456789+01:00', wanted)).toBe(false);
    expect(requestPending('not a time', wanted)).toBe(true);
  });

  it('accepts a HelmRelease that reads both', () => {
    expect(fluxMisconfiguration('web', names, good)).toBeUndefined();
  });

  it('a missing HelmRelease: the message holds a snippet that, pasted, is accepted', () => {
    const m = fluxMisconfiguration('web', names, undefined) ?? '';
    expect(m).toMatch(/^HelmRelease web\/site \(helm\.toolkit\.fluxcd\.io\/v2\) does not exist/);
    const snippet = parse(m.slice(m.indexOf('\n') + 1)) as HelmReleaseObject['spec'];
    expect(fluxMisconfiguration('web', names, { metadata: { name: 'site' }, spec: snippet })).toBeUndefined();
  });

  it.each([
    [
      'another Secret',
      { values: { staticExport: { existingSecret: 'x' } } },
      'existingSecret is not docs-values',
    ],
    [
      'no valuesFrom',
      { valuesFrom: [] },
      'spec.valuesFrom has no entry reading key version of ConfigMap docs-version',
    ],
    [
      'the ConfigMap without targetPath',
      { valuesFrom: [{ kind: 'ConfigMap', name: 'docs-version', valuesKey: 'version' }] },
      'spec.valuesFrom has no entry',
    ],
    [
      'a Secret of that name instead',
      {
        valuesFrom: [
          { kind: 'Secret', name: 'docs-version', valuesKey: 'version', targetPath: 'staticExport.version' },
        ],
      },
      'spec.valuesFrom has no entry',
    ],
    [
      'another target namespace',
      { targetNamespace: 'prod' },
      'installs into namespace prod, but the values Secret is in web',
    ],
  ])('%s: refused, saying what is missing', (_, change, text) => {
    const m = fluxMisconfiguration('web', names, { ...good, spec: { ...good.spec, ...change } });
    expect(m).toContain(text);
  });
});

describe('argoApplication', () => {
  const names = argoNames(release({ argoApplication: { name: 'site', namespace: 'argocd' } }));
  const site = {
    repoURL: 'https://git.example.com/charts',
    path: 'site',
    helm: { valuesObject: { staticExport: { existingSecret: 'docs-values' } } },
  };
  const app = (spec: ApplicationObject['spec']): ApplicationObject => ({
    metadata: { name: 'site', namespace: 'argocd', resourceVersion: '7' },
    spec: { destination: { namespace: 'web' }, ...spec },
  });
  const V = `sha256-${'1'.repeat(64)}`;

  it('finds the source that reads the Secret: values, valuesObject or a parameter', () => {
    expect(siteSource('web', names, app({ source: site }))).toEqual({ path: '/spec/source', source: site });
    const viaValues = { repoURL: 'r', helm: { values: 'staticExport:\n  existingSecret: docs-values\n' } };
    const viaParam = {
      repoURL: 'r',
      helm: { parameters: [{ name: 'staticExport.existingSecret', value: 'docs-values' }] },
    };
    const other = { repoURL: 'o' };
    expect(siteSource('web', names, app({ sources: [other, viaValues] }))).toEqual({
      path: '/spec/sources/1',
      source: viaValues,
    });
    expect(siteSource('web', names, app({ sources: [viaParam, other] }))).toEqual({
      path: '/spec/sources/0',
      source: viaParam,
    });
  });

  it.each([
    ['missing', undefined, 'Application argocd/site (argoproj.io/v1alpha1) does not exist'],
    [
      'another destination',
      app({ source: site, destination: { namespace: 'prod' } }),
      'deploys into namespace prod',
    ],
    [
      'no source reading it',
      app({ source: { repoURL: 'r' } }),
      'has no source setting staticExport.existingSecret to docs-values',
    ],
    ['two sources reading it', app({ sources: [site, site] }), 'has 2 sources setting'],
  ])('%s: refused', (_, a, text) => {
    const found = siteSource('web', names, a);
    expect('problem' in found && found.problem).toContain(text);
  });

  it('sets the parameter, keeps the others, replaces a stale one; nothing when it is set', () => {
    const params = [
      { name: 'replicaCount', value: '3' },
      { name: 'staticExport.version', value: 'old' },
    ];
    const a = app({ source: { ...site, helm: { ...site.helm, parameters: params } } });
    const found = siteSource('web', names, a);
    if ('problem' in found) throw new Error(found.problem);
    expect(versionPatch(a, found, V)).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      {
        op: 'add',
        path: '/spec/source/helm/parameters',
        value: [
          { name: 'replicaCount', value: '3' },
          { name: 'staticExport.version', value: V, forceString: true },
        ],
      },
    ]);
    const set = app({
      source: { ...site, helm: { ...site.helm, parameters: [{ name: 'staticExport.version', value: V }] } },
    });
    const again = siteSource('web', names, set);
    if ('problem' in again) throw new Error(again.problem);
    expect(versionPatch(set, again, V)).toEqual([]);
  });
});
