// spec.target.argoApplication against Argo CD's real Application v1alpha1 CRD (the one Argo CD
// ships): the examples under examples/argocd are applied as they are, and the test asserts exactly
// what the operator changed on the Application and that the presigned link is in the values Secret
// and nowhere else. Also the alternative, examples/argocd/workload-annotation: its ignoreDifferences
// name exactly the fields the operator writes on the chart's Deployment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { findObject, helmTemplate } from '../../support/chart.ts';
import {
  applyObjects,
  decode,
  example,
  getObject,
  installGitopsCrd,
  type KubeDoc,
  linkNowhereIn,
  readyOf,
  untilRelease,
  withoutVolatile,
} from '../../support/gitops.ts';
import { createNamespace, eventually, installCrds, kubectl, kubectlOk } from '../../support/kube.ts';
import { type Harness, startHarness } from '../../support/operator.ts';
import { applySecret, getRelease } from '../../support/resources.ts';

let ns: string;
let altNs: string;
let argoNs: string;
let h: Harness;

beforeAll(async () => {
  await Promise.all([installCrds(), installGitopsCrd('application')]);
  ns = await createNamespace('argo-site');
  altNs = await createNamespace('argo-alt');
  argoNs = await createNamespace('argocd');
  // Short-lived links: the alternative's renewals roll the Deployment too.
  h = await startHarness({ namespaces: [ns, altNs], sim: { exportDurationMs: 300, linkTtlSeconds: 6 } });
  for (const n of [ns, altNs]) await applySecret(n, 'docs-admin-key', { apiKey: h.sim.adminKey });
});

afterAll(async () => {
  await h?.stop();
  for (const n of [ns, altNs, argoNs]) if (n) await kubectl(['delete', 'namespace', n, '--wait=false']);
});

const names = () => ({ docs: ns, argocd: argoNs });

const get = (kind: string, name: string, namespace = ns) => getObject(kind, name, namespace);
const until = (name: string, what: string, test: (r: StaticExportRelease) => boolean, ms?: number) =>
  untilRelease(ns, name, what, test, ms);

describe('the argoApplication target, on the real Application v1alpha1 schema', () => {
  it('writes the values Secret and only the staticExport.version parameter of the site source', async () => {
    await applyObjects(example('argocd/application.yaml', names()));
    const before = await get('application', 'docs', argoNs);
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

    const after = await get('application', 'docs', argoNs);
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
      release: JSON.stringify(await getRelease(ns, 'docs')),
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
      { ...app, metadata: { name: 'multi', namespace: argoNs }, spec: { ...rest, sources: [other, site] } },
    ]);
    const [release] = example('argocd/static-export-release.yaml', names()) as [KubeDoc];
    await applyObjects([
      {
        ...release,
        metadata: { name: 'multi', namespace: ns },
        spec: {
          ...(release.spec as object),
          target: { argoApplication: { name: 'multi', namespace: argoNs, secretName: 'docs-values' } },
        },
      },
    ]);
    // Both releases name the same Secret: the second is refused, the Application untouched.
    const refused = await until('multi', 'TargetFailed', (x) => readyOf(x)?.reason === 'TargetFailed');
    expect(readyOf(refused)?.message).toContain(`Secret ${ns}/docs-values exists and is not managed`);
    expect((await get('application', 'multi', argoNs)).spec?.sources).toEqual([other, site]);

    await kubectlOk([
      ...['patch', 'application', 'multi', '-n', argoNs, '--type=json', '-p'],
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
      ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/target/argoApplication/secretName"}]',
    ]);
    const r = await until(
      'multi',
      'Ready',
      (x) => readyOf(x)?.status === 'True' && !!x.status?.current?.version,
    );
    const sources = (await get('application', 'multi', argoNs)).spec?.sources as {
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
          metadata: { name, namespace: ns },
          spec: { ...(release.spec as object), target: { argoApplication: { name, namespace: argoNs } } },
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
        metadata: { name: 'elsewhere', namespace: argoNs },
        spec: { ...spec, destination: { server: 'https://kubernetes.default.svc', namespace: 'web' } },
      },
    ]);
    await apply('elsewhere');
    await misconfigured('elsewhere', `deploys into namespace web, but the values Secret is in ${ns}`);

    await applyObjects([{ ...app, metadata: { name: 'unread', namespace: argoNs } }]);
    await apply('unread');
    const m = await misconfigured(
      'unread',
      'has no source setting staticExport.existingSecret to unread-values',
    );
    expect(readyOf(m)?.message).toContain(snippet.replace('nowhere', 'unread'));
    expect(await kubectl(['get', 'secret', 'unread-values', '-n', ns])).toMatchObject({ code: 1 });
    expect((await get('application', 'unread', argoNs)).spec).toEqual(spec);
  });
});

describe('the alternative: the operator rolls the Deployment, the Application ignores those annotations', () => {
  it("ignoreDifferences names exactly the operator's fields on the chart's Deployment, and RespectIgnoreDifferences is on", async () => {
    const alt = { docs: altNs, argocd: argoNs };
    const [app] = example('argocd/workload-annotation/application.yaml', alt) as [KubeDoc];
    await applyObjects([{ ...app, metadata: { name: 'annotated', namespace: argoNs } }]);
    const spec = (await get('application', 'annotated', argoNs)).spec as {
      ignoreDifferences: { group: string; kind: string; jsonPointers: string[] }[];
      syncPolicy: { syncOptions: string[] };
      source: { helm: { valuesObject: object } };
    };
    expect(spec.syncPolicy.syncOptions).toContain('RespectIgnoreDifferences=true');

    // The chart's Deployment as Argo CD renders it from the Application's values; the operator rolls it.
    const rendered = await helmTemplate('helm4', spec.source.helm.valuesObject, 'docs', { namespace: altNs });
    expect(rendered.code, rendered.stderr).toBe(0);
    const deployment = findObject(rendered.objects, 'Deployment');
    await applyObjects([{ ...deployment, metadata: { ...deployment.metadata, namespace: altNs } }]);
    await applyObjects(example('argocd/workload-annotation/static-export-release.yaml', alt));
    // Published, rolled, and a renewal rolled too: both annotations the operator writes are there.
    const live = await eventually('both annotations', async () => {
      const d = await get('deployment', deployment.metadata.name, altNs);
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
