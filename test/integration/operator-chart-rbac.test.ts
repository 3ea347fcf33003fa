// The operator chart's RBAC, measured: the operator runs with a token of the ServiceAccount the
// chart installed (ClusterRole, or Roles in the watched namespace) through a publish with re-rolls,
// a sync, link renewals, the Flux and Argo CD targets and an agent job. The API server's audit log says
// what it asked for: nothing may be refused (neither by RBAC nor by the chart's admission policies),
// and the chart may grant nothing the run did not use.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { auditLogPath } from '../../scripts/control-plane/control-plane.ts';
import type { StaticExportRelease } from '../../src/crd/index.ts';
import {
  createNamespace,
  eventually,
  installCrds,
  kubeconfig,
  kubectl,
  kubectlOk,
  tokenKubeconfig,
} from '../support/cluster/kube.ts';
import { type Harness, startHarness } from '../support/cluster/operator.ts';
import {
  applyAgentJob,
  applyRelease,
  applySecret,
  getAgentJob,
  getRelease,
} from '../support/cluster/resources.ts';
import { tempDir } from '../support/temp.ts';
import {
  findObject,
  freePort,
  helm,
  helmInstall,
  OPERATOR_CHART_DIR,
  parseManifests,
  ROOT,
} from '../support/tools/chart.ts';
import { applyObjects, example, installGitopsCrd, type KubeDoc } from '../support/tools/gitops.ts';
import { runCli } from '../support/tools/run-cli.ts';

const controlPlaneDir = inject('controlPlaneDir');
const RELEASE = 'seo';
const FULLNAME = `${RELEASE}-static-export-operator`;
/**
 * Granted but never a request: the OwnerReferencesPermissionEnforcement admission plugin checks it
 * when the operator creates its values Secret with blockOwnerDeletion (the last test shows it).
 */
const ADMISSION_ONLY = ['staticexport.dev/staticexportreleases/finalizers:update'];
// A reconcile reads its object from the informer's cache; get is for what the cache cannot show
// current (an object deleted meanwhile, resourceVersions that cannot be ordered), which this run
// does not meet.
const CACHE_FALLBACK_ONLY = ['staticexport.dev/agentjobs:get', 'staticexport.dev/staticexportreleases:get'];

interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: {
    apiGroup?: string;
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
  };
  responseStatus?: { code?: number; message?: string };
  requestURI: string;
}

const key = (group: string | undefined, resource: string, verb: string) =>
  `${group ?? ''}/${resource}:${verb}`;

function auditOf(username: string): AuditEvent[] {
  return readFileSync(auditLogPath(controlPlaneDir as string), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.user.username === username);
}

function workload(kind: 'Deployment' | 'StatefulSet', namespace: string, name: string, labels = {}) {
  const selector = { 'app.kubernetes.io/name': name };
  return stringify({
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector },
        spec: { containers: [{ name: 'web', image: 'registry.example/site:1' }] },
      },
    },
  });
}

const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

const namespaces: string[] = [];
afterAll(async () => {
  for (const ns of namespaces) await kubectl(['delete', 'namespace', ns, '--wait=false']);
});

beforeAll(async () => {
  await Promise.all([installCrds(), installGitopsCrd('helmRelease'), installGitopsCrd('application')]);
});

describe.runIf(controlPlaneDir).each([
  ['a ClusterRole', false],
  ['Roles in the watched namespace', true],
])('the operator under the chart ServiceAccount, with %s', (_, namespaced) => {
  let releaseNs: string;
  let siteNs: string;
  let h: Harness | undefined;
  let rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  const username = () => `system:serviceaccount:${releaseNs}:${FULLNAME}`;

  beforeAll(async () => {
    releaseNs = await createNamespace('opchart-rbac');
    siteNs = await createNamespace('opchart-site');
    namespaces.push(releaseNs, siteNs);
    const installed = await helmInstall('helm4', {
      release: RELEASE,
      chart: OPERATOR_CHART_DIR,
      namespace: releaseNs,
      values: {
        crds: { enabled: false },
        operator: { apiBaseUrl: 'https://api.example.com' },
        ...(namespaced ? { watchNamespaces: [siteNs] } : {}),
      },
    });
    expect(installed.code, installed.stderr).toBe(0);
    const manifest = await helm('helm4', [
      'get',
      'manifest',
      RELEASE,
      '--kubeconfig',
      kubeconfig(),
      '-n',
      releaseNs,
    ]);
    // The roles for people (aggregated into view and edit) are bound to no ServiceAccount.
    const roles = parseManifests(manifest.stdout).filter(
      (o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && !/-(view|edit)$/.test(o.metadata.name),
    );
    expect(roles.map((r) => [r.kind, r.metadata.namespace ?? ''])).toEqual(
      namespaced
        ? [
            ['Role', siteNs],
            ['Role', releaseNs],
          ]
        : [
            ['ClusterRole', ''],
            ['Role', releaseNs],
          ],
    );
    rules = roles.flatMap((r) => r.rules);
    // The run below goes through the chart's admission policies too.
    expect(
      parseManifests(manifest.stdout)
        .filter((o) => o.kind === 'ValidatingAdmissionPolicy')
        .map((o) => o.spec.matchConditions[0].expression),
    ).toEqual(Array(4).fill(`request.userInfo.username == "${username()}"`));
    const token = (await kubectlOk(['create', 'token', FULLNAME, '-n', releaseNs, '--duration=1h'])).trim();
    h = await startHarness({
      namespaces: [siteNs],
      sim: { exportDurationMs: 300, agentJobDurationMs: 500, linkTtlSeconds: 6 },
      operator: {
        kubeconfig: tokenKubeconfig(token),
        leaderElection: {
          namespace: releaseNs,
          name: FULLNAME,
          leaseDurationMs: 4_000,
          renewDeadlineMs: 3_000,
          retryPeriodMs: 1_000,
        },
      },
    });
  });

  afterAll(async () => {
    await h?.stop();
    // Its ClusterRole and binding are cluster-scoped: deleting the namespaces would leave them.
    await helm('helm4', ['uninstall', RELEASE, '--kubeconfig', kubeconfig(), '-n', releaseNs]);
  });

  it('publishes with re-rolls, renews links and completes an agent job with no request refused', async () => {
    const harness = h as Harness;
    await kubectlOk(
      ['apply', '-f', '-'],
      workload('Deployment', siteNs, 'site', { 'staticexport.dev/values-secret': 'site-values' }),
    );
    // spec.rollout.workloadRefs: labelled as the chart's admission policy requires of the workloads
    // the operator may roll (operator-admission.test.ts attacks the rest).
    const rollable = { 'staticexport.dev/rollout': 'allowed' };
    await kubectlOk(['apply', '-f', '-'], workload('Deployment', siteNs, 'extra', rollable));
    await kubectlOk(['apply', '-f', '-'], workload('StatefulSet', siteNs, 'cache', rollable));
    // Labelled workloads of both kinds: their watches (metadata) carry events, so the audit log has them.
    await kubectlOk(
      ['apply', '-f', '-'],
      workload('StatefulSet', siteNs, 'site-cache', { 'staticexport.dev/values-secret': 'site-values' }),
    );
    await applySecret(siteNs, 'admin-key', { apiKey: harness.sim.adminKey });
    await applyRelease(siteNs, 'site', {
      rollout: {
        workloadRefs: [
          { kind: 'Deployment', name: 'extra' },
          { kind: 'StatefulSet', name: 'cache' },
        ],
      },
    });
    const ready = await eventually(
      'release Ready',
      async () => {
        const r = await getRelease(siteNs, 'site');
        return readyOf(r)?.status === 'True' ? r : undefined;
      },
      90_000,
    );
    await eventually(
      'link renewed',
      async () => {
        const r = await getRelease(siteNs, 'site');
        return r.status?.current?.renewedAt && r.status.current.expiresAt !== ready.status?.current?.expiresAt
          ? r
          : undefined;
      },
      60_000,
    );
    const annotations = JSON.parse(
      await kubectlOk([
        'get',
        'statefulset',
        'cache',
        '-n',
        siteNs,
        '-o',
        'jsonpath={.spec.template.metadata.annotations}',
      ]),
    );
    expect(annotations['staticexport.dev/version']).toBe(ready.status?.current?.version);

    // The GitOps targets: a HelmRelease and an Application (the examples) served; the version
    // ConfigMap edited by someone else and written back (a patch of the ConfigMap).
    await applyObjects(example('flux/helmrelease.yaml', { docs: siteNs }));
    await applyRelease(siteNs, 'flux', {
      target: { fluxHelmRelease: { name: 'docs', secretName: 'docs-values', configMapName: 'docs-version' } },
    });
    const [app] = example('argocd/application.yaml', { docs: siteNs, argocd: siteNs }) as [KubeDoc];
    const source = (app.spec as { source: object }).source;
    await applyObjects([
      {
        ...app,
        spec: {
          ...(app.spec as object),
          source: { ...source, helm: { valuesObject: { staticExport: { existingSecret: 'argo-values' } } } },
        },
      },
    ]);
    await applyRelease(siteNs, 'argo', { target: { argoApplication: { name: 'docs' } } });
    for (const name of ['flux', 'argo'])
      await eventually(
        `${name} Ready`,
        async () => readyOf(await getRelease(siteNs, name))?.status === 'True',
      );
    const version = async () =>
      kubectlOk(['get', 'configmap', 'docs-version', '-n', siteNs, '-o', 'jsonpath={.data.version}']);
    const served = await version();
    await kubectlOk(['patch', 'configmap', 'docs-version', '-n', siteNs, '-p', '{"data":{"version":"x"}}']);
    await eventually('version written back', async () => (await version()) === served);
    // A HelmRelease that does not exist: TargetMisconfigured, and again at the next reconcile (a
    // label is enough), which patches the first Event's series.
    await applyRelease(siteNs, 'lost', { target: { fluxHelmRelease: { name: 'missing' } } });
    const seriesCount = async () => {
      const list = JSON.parse(
        await kubectlOk([
          ...['get', 'events.events.k8s.io', '-n', siteNs, '-o', 'json'],
          '--field-selector=regarding.name=lost,reason=TargetMisconfigured',
        ]),
      ) as { items: { series?: { count: number } }[] };
      return list.items[0] ? (list.items[0].series?.count ?? 1) : 0;
    };
    await eventually('TargetMisconfigured event', async () => (await seriesCount()) >= 1);
    await kubectlOk(['label', 'ser', 'lost', '-n', siteNs, 'again=1']);
    await eventually('the Event repeated', async () => (await seriesCount()) >= 2);

    // spec.rollout.onNewContent Sync: nothing rolls, the workload's pods are listed to read what
    // each serves.
    await kubectlOk(
      ['apply', '-f', '-'],
      workload('Deployment', siteNs, 'synced', { 'staticexport.dev/values-secret': 'synced-values' }),
    );
    await applyRelease(siteNs, 'synced', { rollout: { onNewContent: 'Sync' } });
    await eventually("the synced workload's pods listed", async () =>
      auditOf(username()).some((e) => e.objectRef?.resource === 'pods' && e.verb === 'list'),
    );

    await applyAgentJob(siteNs, 'edit', 'proj-a', 'Fix the typo on the home page');
    const job = await eventually('agent job completed', async () => {
      const j = await getAgentJob(siteNs, 'edit');
      return j.status?.state === 'completed' ? j : undefined;
    });
    expect(job.status?.prLink).toMatch(/^https:\/\//);
    await harness.stop();
    h = undefined;

    const events = auditOf(username());
    expect(events.length).toBeGreaterThan(0);
    const refused = events
      .filter((e) => e.responseStatus?.code === 403)
      .map((e) => `${e.verb} ${e.requestURI}: ${e.responseStatus?.message}`);
    expect(refused).toEqual([]);
  });

  it('grants nothing that run did not use', () => {
    const used = new Set(
      auditOf(username())
        .filter((e) => e.objectRef?.resource)
        .map((e) => {
          const ref = e.objectRef ?? {};
          return key(ref.apiGroup, `${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''}`, e.verb);
        }),
    );
    const granted = new Set(
      rules.flatMap((r) =>
        r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => key(g, res, v)))),
      ),
    );
    const unused = [...granted].filter((g) => !used.has(g));
    expect(unused.sort()).toEqual([...ADMISSION_ONLY, ...CACHE_FALLBACK_ONLY].sort());
    // And the run used nothing beyond the grants (a refused request would also show here).
    expect([...used].filter((u) => !granted.has(u)).sort()).toEqual([]);
  });
});

// Needs the admission plugin the suite's own control plane enables.
describe.runIf(controlPlaneDir)('the finalizers grant', () => {
  it('is what lets the operator write its values Secret with blockOwnerDeletion', async () => {
    const ns = await createNamespace('opchart-owner');
    namespaces.push(ns);
    await applyRelease(ns, 'site');
    const release = await getRelease(ns, 'site');
    const rendered = await helm('helm4', [
      'template',
      RELEASE,
      OPERATOR_CHART_DIR,
      '-n',
      ns,
      '--show-only',
      'templates/rbac.yaml',
    ]);
    const clusterRole = findObject(parseManifests(rendered.stdout), 'ClusterRole');
    const ownerRules = (clusterRole.rules as { resources: string[] }[]).filter(
      (r) => !r.resources.includes('staticexportreleases/finalizers'),
    );
    await kubectlOk(
      ['apply', '-f', '-'],
      [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'without', namespace: ns } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'without', namespace: ns },
          rules: ownerRules,
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'without', namespace: ns },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'without' },
          subjects: [{ kind: 'ServiceAccount', name: 'without', namespace: ns }],
        },
      ]
        .map((o) => stringify(o))
        .join('---\n'),
    );
    const valuesSecret = stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'site-values',
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: 'staticexport.dev/v1alpha1',
            kind: 'StaticExportRelease',
            name: 'site',
            uid: release.metadata?.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    });
    const refused = await kubectl(
      ['create', '--as', `system:serviceaccount:${ns}:without`, '-f', '-'],
      valuesSecret,
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/cannot set blockOwnerDeletion/);
  });
});

describe.runIf(controlPlaneDir)('the Deployment as the chart renders it', () => {
  it('runs under the chart ServiceAccount: leads through its Lease in POD_NAMESPACE, ready, takes a signed trigger, drains and releases on SIGTERM', async () => {
    const ns = await createNamespace('opchart-pod');
    namespaces.push(ns);
    const port = await freePort();
    const triggerPort = await freePort();
    const installed = await helmInstall('helm4', {
      release: RELEASE,
      chart: OPERATOR_CHART_DIR,
      namespace: ns,
      values: {
        crds: { enabled: false },
        operator: { apiBaseUrl: 'https://api.example.com' },
        watchNamespaces: [ns],
        metrics: { port },
        trigger: { enabled: true, port: triggerPort },
      },
    });
    expect(installed.code, installed.stderr).toBe(0);
    const manifest = await helm('helm4', [
      'get',
      'manifest',
      RELEASE,
      '--kubeconfig',
      kubeconfig(),
      '-n',
      ns,
    ]);
    const deployment = findObject(parseManifests(manifest.stdout), 'Deployment');
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0] as { args: string[]; env: { name: string; valueFrom?: unknown }[] };
    // The pod's /tmp is an emptyDir: here a fresh directory. The token stands in for the one the
    // kubelet mounts (same ServiceAccount); POD_NAMESPACE is what the downward API gives.
    const tmp = tempDir('operator-pod-');
    const args = container.args.map((a) => a.replace('=/tmp/', `=${tmp}/`));
    expect(container.env.map((e) => e.name)).toEqual(['POD_NAMESPACE']);
    const token = (await kubectlOk(['create', 'token', FULLNAME, '-n', ns, '--duration=1h'])).trim();
    const child = spawn(process.execPath, [join(ROOT, 'src/cli/main.ts'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: tmp, POD_NAMESPACE: ns, KUBECONFIG: tokenKubeconfig(token) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d;
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const holder = await eventually('the Lease held', async () => {
        const lease = JSON.parse(await kubectlOk(['get', 'lease', FULLNAME, '-n', ns, '-o', 'json']));
        return lease.spec.holderIdentity as string | undefined;
      });
      expect(holder).toBeTruthy();
      await eventually('/readyz ok', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok);
      // The trigger receiver under the chart's rules: suspended, so nothing is sent to the admin API.
      const token = 'tt-chart-rbac-0123456789abcdef';
      await applySecret(ns, 'trigger-token', { token });
      await applyRelease(ns, 'site', {
        suspend: true,
        trigger: { tokenSecretRef: { name: 'trigger-token' } },
      });
      const tokenFile = join(tmp, 'token');
      writeFileSync(tokenFile, token);
      const triggered = await runCli([
        'trigger',
        '--url',
        `http://127.0.0.1:${triggerPort}`,
        '--token-file',
        tokenFile,
        `${ns}/site`,
      ]);
      expect(triggered.code, triggered.stderr).toBe(0);
      const release = await getRelease(ns, 'site');
      expect(release.metadata.annotations?.['staticexport.dev/requested-at']).toBeDefined();
    } catch (e) {
      throw new Error(`${String(e)}\noperator output:\n${output}`);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, output).toBe(0);
    const lease = JSON.parse(await kubectlOk(['get', 'lease', FULLNAME, '-n', ns, '-o', 'json']));
    expect(lease.spec.holderIdentity ?? '').toBe('');
    const refused = auditOf(`system:serviceaccount:${ns}:${FULLNAME}`).filter(
      (e) => e.responseStatus?.code === 403,
    );
    expect(refused.map((e) => `${e.verb} ${e.requestURI}`)).toEqual([]);
  });
});
