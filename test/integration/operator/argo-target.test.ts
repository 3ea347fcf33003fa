// spec.target.argoApplication against Argo CD's real Application v1alpha1 CRD (the one Argo CD
// ships): the examples under examples/argocd are applied as they are, and the test asserts exactly
// what the operator changed on the Application and that the presigned link is in the values Secret
// and nowhere else. Also the alternative, examples/argocd/workload-annotation: its ignoreDifferences
// name exactly the fields the operator writes on the chart's Deployment.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { getRelease, untilRelease } from '../../support/cluster/resources.ts';
import { findObject, helmTemplate } from '../../support/tools/chart.ts';
import {
  applyObjects,
  decode,
  example,
  getObject,
  type KubeDoc,
  linkNowhereIn,
  readyOf,
  withoutVolatile,
} from '../../support/tools/gitops.ts';

const h = useOperatorSuite({
  namespaces: ['argo-site', 'argo-alt'],
  unwatched: ['argocd'],
  gitopsCrds: ['application'],
  // Short-lived links: the alternative's renewals roll the Deployment too.
  sim: { exportDurationMs: 300, linkTtlSeconds: 6 },
  adminKeySecret: 'docs-admin-key',
});

const names = () => ({ docs: h.ns, argocd: h.unwatched[0] });

const get = (kind: string, name: string, namespace = h.ns) => getObject(kind, name, namespace);
const until = (name: string, what: string, test: (r: StaticExportRelease) => boolean, ms?: number) =>
  untilRelease(h.ns, name, what, test, ms);

describe('the argoApplication target, on the real Application v1alpha1 schema', () => {
  it('writes the values Secret and only the staticExport.version parameter of the site source', async () => {
    await applyObjects(example('argocd/application.yaml', names()));
    const before = await get('application', 'docs', h.unwatched[0]);
    await applyObjects(example('argocd/static-export-release.yaml', names()));
    const r = await until(
      'docs',
      'Ready',
      (x) => readyOf(x)?.status === 'True' && !!x.status?.current?.version,
    );
    const version = r.status?.current?.version ?? '';

    const secret = await get('secret', 'docs-values');
    const link = decode(secret.data?.bundleUrl);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.+\?.+/);
    expect(decode(secret.data?.version)).toBe(version);

    const after = await get('application', 'docs', h.unwatched[0]);
    const source = before.spec?.source as { helm: Record<string, unknown> };
    expect(withoutVolatile(after, ['generation'])).toEqual(
      withoutVolatile(
        {
          ...before,
          spec: {
            ...before.spec,
            source: {
              ...source,
              helm: {
                ...source.helm,
                parameters: [{ name: 'staticExport.version', value: version, forceString: true }],
              },
            },
          },
        },
        ['generation'],
      ),
    );
    expect(after.metadata.managedFields?.filter((m) => m.manager === 'static-export-operator')).toEqual([
      expect.objectContaining({
        operation: 'Update',
        fieldsV1: { 'f:spec': { 'f:source': { 'f:helm': { 'f:parameters': {} } } } },
      }),
    ]);

    linkNowhereIn(link, {
      application: JSON.stringify(after),
      release: JSON.stringify(await getRelease(h.ns, 'docs')),
      events: await kubectlOk(['get', 'events.events.k8s.io', '-A', '-o', 'json']),
      logs: h.logs.join('\n'),
    });
  });

  it('a multi-source Application: the parameter goes on the source that reads the Secret, other parameters kept', async () => {
    const [app] = example('argocd/application.yaml', names()) as [KubeDoc];
    const spec = app.spec as { source: Record<string, unknown> };
    const site = {
      ...spec.source,
      helm: {
        ...(spec.source.helm as object),
        parameters: [
          { name: 'replicaCount', value: '3' },
          { name: 'staticExport.version', value: 'stale' },
        ],
      },
    };
    const other = { repoURL: 'https://github.com/example/config', targetRevision: 'main', path: 'extra' };
    const { source: _, ...rest } = spec;
    await applyObjects([
      {
        ...app,
        metadata: { name: 'multi', namespace: h.unwatched[0] },
        spec: { ...rest, sources: [other, site] },
      },
    ]);
    const [release] = example('argocd/static-export-release.yaml', names()) as [KubeDoc];
    await applyObjects([
      {
        ...release,
        metadata: { name: 'multi', namespace: h.ns },
        spec: {
          ...(release.spec as object),
          target: {
            argoApplication: { name: 'multi', namespace: h.unwatched[0], secretName: 'docs-values' },
          },
        },
      },
    ]);
    // Both releases name the same Secret: the second is refused, the Application untouched.
    const refused = await until('multi', 'TargetFailed', (x) => readyOf(x)?.reason === 'TargetFailed');
    expect(readyOf(refused)?.message).toContain(`Secret ${h.ns}/docs-values exists and is not managed`);
    expect((await get('application', 'multi', h.unwatched[0])).spec?.sources).toEqual([other, site]);

    await kubectlOk([
      ...['patch', 'application', 'multi', '-n', h.unwatched[0], '--type=json', '-p'],
      JSON.stringify([
        {
          op: 'replace',
          path: '/spec/sources/1/helm/valuesObject/staticExport/existingSecret',
          value: 'multi-values',
        },
      ]),
    ]);
    await kubectlOk([
      'patch',
      'ser',
      'multi',
      '-n',
      h.ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/target/argoApplication/secretName"}]',
    ]);
    const r = await until(
      'multi',
      'Ready',
      (x) => readyOf(x)?.status === 'True' && !!x.status?.current?.version,
    );
    const sources = (await get('application', 'multi', h.unwatched[0])).spec?.sources as {
      helm?: { parameters?: unknown };
    }[];
    expect(sources[0]).toEqual(other);
    expect(sources[1]?.helm?.parameters).toEqual([
      { name: 'replicaCount', value: '3' },
      { name: 'staticExport.version', value: r.status?.current?.version, forceString: true },
    ]);
  });

  it('misconfigured: missing, wrong destination, no source reading the Secret: TargetMisconfigured with what to add', async () => {
    const [release] = example('argocd/static-export-release.yaml', names()) as [KubeDoc];
    const apply = (name: string) =>
      applyObjects([
        {
          ...release,
          metadata: { name, namespace: h.ns },
          spec: {
            ...(release.spec as object),
            target: { argoApplication: { name, namespace: h.unwatched[0] } },
          },
        },
      ]);
    const misconfigured = (name: string, text: string) =>
      until(name, `TargetMisconfigured: ${text}`, (x) => {
        const c = readyOf(x);
        return c?.reason === 'TargetMisconfigured' && (c.message ?? '').includes(text);
      });
    await apply('nowhere');
    const snippet = [
      'helm:',
      '  valuesObject:',
      '    staticExport:',
      '      enabled: true',
      '      existingSecret: nowhere-values',
    ].join('\n');
    expect(readyOf(await misconfigured('nowhere', 'does not exist'))?.message).toContain(snippet);

    const [app] = example('argocd/application.yaml', names()) as [KubeDoc];
    const spec = app.spec as Record<string, unknown>;
    await applyObjects([
      {
        ...app,
        metadata: { name: 'elsewhere', namespace: h.unwatched[0] },
        spec: { ...spec, destination: { server: 'https://kubernetes.default.svc', namespace: 'web' } },
      },
    ]);
    await apply('elsewhere');
    await misconfigured('elsewhere', `deploys into namespace web, but the values Secret is in ${h.ns}`);

    await applyObjects([{ ...app, metadata: { name: 'unread', namespace: h.unwatched[0] } }]);
    await apply('unread');
    const m = await misconfigured(
      'unread',
      'has no source setting staticExport.existingSecret to unread-values',
    );
    expect(readyOf(m)?.message).toContain(snippet.replace('nowhere', 'unread'));
    expect(await kubectl(['get', 'secret', 'unread-values', '-n', h.ns])).toMatchObject({ code: 1 });
    expect((await get('application', 'unread', h.unwatched[0])).spec).toEqual(spec);
  });
});

describe('the alternative: the operator rolls the Deployment, the Application ignores those annotations', () => {
  it("ignoreDifferences names exactly the operator's fields on the chart's Deployment, and RespectIgnoreDifferences is on", async () => {
    const alt = { docs: h.namespaces[1], argocd: h.unwatched[0] };
    const [app] = example('argocd/workload-annotation/application.yaml', alt) as [KubeDoc];
    await applyObjects([{ ...app, metadata: { name: 'annotated', namespace: h.unwatched[0] } }]);
    const spec = (await get('application', 'annotated', h.unwatched[0])).spec as {
      ignoreDifferences: { group: string; kind: string; jsonPointers: string[] }[];
      syncPolicy: { syncOptions: string[] };
      source: { helm: { valuesObject: object } };
    };
    expect(spec.syncPolicy.syncOptions).toContain('RespectIgnoreDifferences=true');

    // The chart's Deployment as Argo CD renders it from the Application's values; the operator rolls it.
    const rendered = await helmTemplate('helm4', spec.source.helm.valuesObject, 'docs', {
      namespace: h.namespaces[1],
    });
    expect(rendered.code, rendered.stderr).toBe(0);
    const deployment = findObject(rendered.objects, 'Deployment');
    await applyObjects([{ ...deployment, metadata: { ...deployment.metadata, namespace: h.namespaces[1] } }]);
    await applyObjects(example('argocd/workload-annotation/static-export-release.yaml', alt));
    // Published, rolled, and a renewal rolled too: both annotations the operator writes are there.
    const live = await eventually('both annotations', async () => {
      const d = await get('deployment', deployment.metadata.name, h.namespaces[1]);
      const a = (d.spec as { template: { metadata: { annotations?: Record<string, string> } } }).template
        .metadata.annotations;
      return a?.['staticexport.dev/version'] && a['staticexport.dev/renewed-at'] ? d : undefined;
    });
    const owned = live.metadata.managedFields?.filter((m) => m.manager === 'static-export-operator') ?? [];
    const ownedPaths = owned.flatMap((m) => leaves(m.fieldsV1));
    const ignored = spec.ignoreDifferences.filter((d) => d.group === 'apps' && d.kind === 'Deployment');
    const pointers = ignored.flatMap((d) => d.jsonPointers);
    // Exactly what the operator owns on the Deployment is ignored, nothing of the chart's besides.
    expect(pointers.sort()).toEqual(ownedPaths.sort());
    expect(pointers.sort()).toEqual([
      '/spec/template/metadata/annotations/staticexport.dev~1renewed-at',
      '/spec/template/metadata/annotations/staticexport.dev~1version',
    ]);
  });
});

/** The JSON pointers of the leaves of a managedFields fieldsV1 set (`f:` keys only). */
function leaves(fields: unknown, prefix = ''): string[] {
  const entries = Object.entries((fields ?? {}) as Record<string, unknown>).filter(([k]) =>
    k.startsWith('f:'),
  );
  if (!entries.length) return prefix ? [prefix] : [];
  return entries.flatMap(([k, v]) =>
    leaves(v, `${prefix}/${k.slice(2).replaceAll('~', '~0').replaceAll('/', '~1')}`),
  );
}
