// The operator chart rendered by the real Helm 4 and Helm 3 binaries: CRDs identical to crds/,
// the Deployment's flags understood by the operator command, RBAC in the right scope.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_CRD_DIR, chartCrdTemplate } from '../../../scripts/chart-crds.ts';
import { SHUTDOWN_DRAIN_MS } from '../../../src/cli/commands/operator.ts';
import { operatorNeeds } from '../../../src/cli/rbac-checks.ts';
import { registerBudgetMetrics } from '../../../src/controllers/budget-metrics.ts';
import { ApiClients } from '../../../src/controllers/credentials.ts';
import { registerReleaseMetrics } from '../../../src/controllers/release-metrics.ts';
import { StartBudgets } from '../../../src/controllers/static-export-release/budget/start-budget.ts';
import { createLogger } from '../../../src/log.ts';
import { Metrics } from '../../../src/runtime/metrics.ts';
import {
  findObject,
  HELMS,
  type HelmName,
  helmLint,
  helmTemplate,
  type KubeObject,
  OPERATOR_CHART_DIR,
  podSpec,
  ROOT,
} from '../../support/tools/chart.ts';

const NS = 'static-export-system';
const isTest = (o: KubeObject) => o.metadata.annotations?.['helm.sh/hook'] === 'test';
/** What `helm install` creates; `helm test`'s objects apart. */
async function render(helm: HelmName, values: object = {}) {
  const rendered = await helmTemplate(helm, values, 'seo', { chart: OPERATOR_CHART_DIR, namespace: NS });
  return {
    ...rendered,
    objects: rendered.objects.filter((o) => !isTest(o)),
    tests: rendered.objects.filter(isTest),
  };
}
const crdsDir = join(ROOT, 'crds');
const crdFiles = readdirSync(crdsDir).sort();
const ofKind = (objects: KubeObject[], kind: string) => objects.filter((o) => o.kind === kind);
const container = (objects: KubeObject[]) => podSpec(objects).containers[0];
const DIGEST = `sha256:${'0'.repeat(64)}`;

describe('CRD templates', () => {
  it('are what `npm run generate` makes of crds/ (run it after changing src/crd)', () => {
    expect(readdirSync(join(ROOT, CHART_CRD_DIR)).sort()).toEqual(crdFiles);
    for (const file of crdFiles) {
      expect(readFileSync(join(ROOT, CHART_CRD_DIR, file), 'utf8'), `${CHART_CRD_DIR}/${file} is stale`).toBe(
        chartCrdTemplate(file, readFileSync(join(crdsDir, file), 'utf8')),
      );
    }
  });

  it('refuses a CRD text Helm would evaluate as a template', () => {
    expect(() => chartCrdTemplate('x.yaml', 'description: use {{ .Values }}\n')).toThrow(/contains "\{\{"/);
  });
});

/** The names of every metric the operator registers (the per-release and budget ones included). */
async function servedMetricNames(): Promise<Set<string>> {
  const metrics = new Metrics();
  registerReleaseMetrics(metrics, () => []);
  registerBudgetMetrics(
    metrics,
    new ApiClients({ logger: createLogger({ level: 'silent' }) }),
    new StartBudgets(),
  );
  return new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
}

describe.each(Object.keys(HELMS) as HelmName[])('%s', (helm) => {
  it('passes helm lint --strict with the defaults and with everything optional on', async () => {
    for (const values of [
      {},
      {
        watchNamespaces: ['docs', 'blog'],
        openshift: true,
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
        ],
        networkPolicy: { enabled: true, apiServerPeers: [{ ipBlock: { cidr: '10.0.0.1/32' } }] },
        metrics: {
          serviceMonitor: { enabled: true, labels: { release: 'prom' } },
          prometheusRule: { enabled: true },
          grafanaDashboard: { enabled: true, annotations: { grafana_folder: 'Operators' } },
        },
        trigger: { enabled: true, from: [{ namespaceSelector: { matchLabels: { ci: 'true' } } }] },
      },
    ]) {
      const r = await helmLint(helm, values, OPERATOR_CHART_DIR);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
  });

  it('renders the CRDs of crds/ unchanged, kept on uninstall by default', async () => {
    const { objects, stderr } = await render(helm);
    const crds = ofKind(objects, 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort(), stderr).toEqual(
      crdFiles.map((f) => f.replace(/\.yaml$/, '')),
    );
    for (const crd of crds) {
      const { annotations, ...metadata } = crd.metadata;
      expect(annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
      const source = parse(readFileSync(join(crdsDir, `${crd.metadata.name}.yaml`), 'utf8'));
      expect({ ...crd, metadata }).toEqual(source);
    }
  });

  it('crds.keep false drops the keep policy; crds.enabled false renders no CRD', async () => {
    const notKept = await render(helm, { crds: { keep: false } });
    const crds = ofKind(notKept.objects, 'CustomResourceDefinition');
    expect(crds).toHaveLength(crdFiles.length);
    for (const crd of crds) expect(crd.metadata.annotations).toBeUndefined();
    const none = await render(helm, { crds: { enabled: false } });
    expect(none.code, none.stderr).toBe(0);
    expect(ofKind(none.objects, 'CustomResourceDefinition')).toEqual([]);
  });

  it('runs two replicas with leader election, the Lease in the pod namespace', async () => {
    const { objects } = await render(helm);
    const deployment = findObject(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(2);
    const c = container(objects);
    expect(c.args).toEqual(
      expect.arrayContaining([
        'operator',
        '--lease-name=seo-static-export-operator',
        '--lease-duration=15s',
        '--renew-deadline=10s',
        '--retry-period=2s',
      ]),
    );
    expect(c.args).not.toContain('--no-leader-election');
    expect(c.env).toContainEqual({
      name: 'POD_NAMESPACE',
      valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
    });
    const leaseRole = ofKind(objects, 'Role').find((r) => r.metadata.name.endsWith('-leader-election'));
    expect(leaseRole?.metadata.namespace).toBe(NS);
    expect(leaseRole?.rules).toContainEqual({
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: ['seo-static-export-operator'],
      verbs: ['get', 'update'],
    });
  });

  it('downloads into an emptyDir with a size limit, under a read-only root, as non-root', async () => {
    const { objects } = await render(helm, { workDir: { sizeLimit: '1Gi' } });
    const pod = podSpec(objects);
    const c = container(objects);
    const workDir = (c.args as string[])
      .find((a) => a.startsWith('--work-dir='))
      ?.slice('--work-dir='.length);
    const mount = (c.volumeMounts as { name: string; mountPath: string }[]).find((m) =>
      `${workDir}/`.startsWith(`${m.mountPath}/`),
    );
    expect(mount, `no volume under ${workDir}`).toBeDefined();
    expect(pod.volumes).toContainEqual({ name: mount?.name, emptyDir: { sizeLimit: '1Gi' } });
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(SHUTDOWN_DRAIN_MS / 1000);
  });

  it('probes /healthz and /readyz on the metrics port the operator listens on, behind the metrics Service', async () => {
    const { objects } = await render(helm, { metrics: { port: 9090 } });
    const c = container(objects);
    expect(c.args).toContain('--metrics-address=0.0.0.0:9090');
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: 9090, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    const service = findObject(objects, 'Service');
    expect(service.spec.ports).toEqual([
      { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    expect(service.spec.selector).toEqual(findObject(objects, 'Deployment').spec.selector.matchLabels);
  });

  it('maps every setting to a flag the operator command knows', async () => {
    const { objects } = await render(helm, {
      operator: {
        apiBaseUrl: 'https://api.example.com',
        allowedApiBaseUrls: ['https://eu.api.example.com', 'https://us.api.example.com'],
        allowInsecureApiBaseUrl: true,
        allowedGitUrls: [
          'https://github.com/acme/gitops.git',
          'http://git.internal/acme/sites',
          'git@github.com:acme/deploy.git',
          'ssh://git@git.internal:2222/srv/git/sites.git',
        ],
        allowInsecureGitUrl: true,
        apiRequestsPerMinute: 50,
        startBudgetPerHour: 6,
        allowPrivateBundleLinks: true,
        concurrency: 8,
        keyPrefix: 'acme',
        logLevel: 'debug',
      },
      watchNamespaces: ['docs', 'blog', 'docs'],
      leaderElection: { leaseDurationSeconds: 30, renewDeadlineSeconds: 20, retryPeriodSeconds: 4 },
      extraArgs: ['--download-timeout=900s'],
      extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=256' }],
      trigger: { enabled: true, requestsPerMinute: 10 },
    });
    const c = container(objects);
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--api-base-url=https://api.example.com',
        '--allowed-api-base-urls=https://eu.api.example.com,https://us.api.example.com',
        '--allow-insecure-api-base-url',
        '--allowed-git-urls=https://github.com/acme/gitops.git,http://git.internal/acme/sites,git@github.com:acme/deploy.git,ssh://git@git.internal:2222/srv/git/sites.git',
        '--allow-insecure-git-url',
        '--api-requests-per-minute=50',
        '--start-budget-per-hour=6',
        '--allow-private-bundle-links',
        '--concurrency=8',
        '--key-prefix=acme',
        '--log-level=debug',
        '--namespaces=docs,blog',
        '--lease-duration=30s',
        '--renew-deadline=20s',
        '--retry-period=4s',
        '--download-timeout=900s',
        '--trigger-address=0.0.0.0:8082',
        '--trigger-requests-per-minute=10',
      ]),
    );
    expect(c.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=256' });
    const { stdout: help } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/node'), [
      join(ROOT, 'src/cli/main.ts'),
      'operator',
      '--help',
    ]);
    const [command, ...flags] = c.args as string[];
    expect(command).toBe('operator');
    for (const flag of flags) expect(help, `${flag} is no operator flag`).toContain(`${flag.split('=')[0]} `);
  });

  it('pins the image by digest, else by tag defaulting to appVersion', async () => {
    const byTag = container((await render(helm)).objects);
    expect(byTag.image).toBe('ghcr.io/static-export-operator/static-export:0.1.0');
    const pinned = container((await render(helm, { image: { tag: '9.9.9', digest: DIGEST } })).objects);
    expect(pinned.image).toBe(`ghcr.io/static-export-operator/static-export@${DIGEST}`);
  });

  it('passes scheduling settings through to the pod', async () => {
    const affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    };
    const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'ops', effect: 'NoSchedule' }];
    const { objects } = await render(helm, {
      affinity,
      tolerations,
      priorityClassName: 'system-cluster-critical',
      resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    });
    const pod = podSpec(objects);
    expect(pod).toMatchObject({ affinity, tolerations, priorityClassName: 'system-cluster-critical' });
    expect(container(objects).resources).toEqual({
      requests: { cpu: '50m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
  });

  it('binds a ClusterRole by default, Roles in the watched namespaces only with watchNamespaces', async () => {
    const cluster = (await render(helm)).objects;
    const [clusterRole] = ofKind(cluster, 'ClusterRole');
    expect(ofKind(cluster, 'ClusterRoleBinding')[0]?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'seo-static-export-operator', namespace: NS },
    ]);
    const namespaced = (await render(helm, { watchNamespaces: ['docs', 'blog'] })).objects;
    // Only the roles for people (aggregated into view and edit) are cluster-wide.
    expect(ofKind(namespaced, 'ClusterRole').map((r) => r.metadata.name)).toEqual([
      'seo-static-export-operator-view',
      'seo-static-export-operator-edit',
    ]);
    expect(ofKind(namespaced, 'ClusterRoleBinding')).toEqual([]);
    const roles = ofKind(namespaced, 'Role').filter((r) => !r.metadata.name.endsWith('-leader-election'));
    expect(roles.map((r) => r.metadata.namespace)).toEqual(['docs', 'blog']);
    for (const role of roles) expect(role.rules).toEqual(clusterRole?.rules);
    const bindings = ofKind(namespaced, 'RoleBinding').filter(
      (r) => !r.metadata.name.endsWith('-leader-election'),
    );
    expect(bindings.map((b) => [b.metadata.namespace, b.roleRef.name])).toEqual([
      ['docs', 'seo-static-export-operator'],
      ['blog', 'seo-static-export-operator'],
    ]);
  });

  it("grants what `check` asks the operator's ServiceAccount for, and beyond it only the optional targets' and trigger's rules", async () => {
    const { objects } = await render(helm, { trigger: { enabled: true } });
    const role = ofKind(objects, 'ClusterRole').find((r) => r.metadata.name === 'seo-static-export-operator');
    const granted = (
      (role?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[]
    ).flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${v} ${res}.${g}`))),
    );
    const checked = operatorNeeds('docs', NS)
      .filter((p) => p.resource !== 'leases')
      .map((p) => `${p.verb} ${p.resource}.${p.group}`);
    const optional = [
      'patch staticexportreleases.staticexport.dev',
      'get configmaps.',
      'create configmaps.',
      'patch configmaps.',
      'get helmreleases.helm.toolkit.fluxcd.io',
      'patch helmreleases.helm.toolkit.fluxcd.io',
      'get applications.argoproj.io',
      'patch applications.argoproj.io',
    ];
    expect([...granted].sort()).toEqual([...checked, ...optional].sort());
  });

  it('leaves out the Flux rules with rbac.fluxHelmReleases false and the Argo CD rule with rbac.argoApplications false, in Roles too', async () => {
    const resourcesOf = (role: KubeObject | undefined) =>
      ((role?.rules ?? []) as { resources: string[] }[]).flatMap((r) => r.resources);
    const operatorRoles = (objects: KubeObject[]) =>
      objects.filter(
        (o) =>
          (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.name === 'seo-static-export-operator',
      );
    const [all] = operatorRoles((await render(helm)).objects);
    expect(resourcesOf(all)).toEqual(expect.arrayContaining(['helmreleases', 'configmaps', 'applications']));
    for (const watchNamespaces of [[], ['docs', 'blog']]) {
      const withoutFlux = operatorRoles(
        (await render(helm, { watchNamespaces, rbac: { fluxHelmReleases: false } })).objects,
      );
      const withoutArgo = operatorRoles(
        (await render(helm, { watchNamespaces, rbac: { argoApplications: false } })).objects,
      );
      const neither = operatorRoles(
        (await render(helm, { watchNamespaces, rbac: { fluxHelmReleases: false, argoApplications: false } }))
          .objects,
      );
      expect(withoutFlux.length).toBe(Math.max(1, watchNamespaces.length));
      for (const role of withoutFlux) {
        expect(resourcesOf(role)).not.toContain('helmreleases');
        // The version ConfigMap is the Flux target's only use of ConfigMaps.
        expect(resourcesOf(role)).not.toContain('configmaps');
        expect(resourcesOf(role)).toContain('applications');
      }
      for (const role of withoutArgo) {
        expect(resourcesOf(role)).not.toContain('applications');
        expect(resourcesOf(role)).toEqual(expect.arrayContaining(['helmreleases', 'configmaps']));
      }
      // What is left is exactly what every release needs (check's list) and nothing of either target.
      for (const role of neither)
        expect(role.rules).toEqual(
          ((all?.rules ?? []) as { resources: string[] }[]).filter(
            (r) => !r.resources.some((res) => ['helmreleases', 'configmaps', 'applications'].includes(res)),
          ),
        );
    }
  });

  it('confines the operator ServiceAccount with four admission policies, each bound and matched to its username', async () => {
    const { objects } = await render(helm, { serviceAccount: { name: 'op' } });
    const policies = ofKind(objects, 'ValidatingAdmissionPolicy');
    const names = ['workloads', 'flux-helmreleases', 'argo-applications', 'secrets-configmaps'].map(
      (s) => `${NS}-seo-static-export-operator-${s}`,
    );
    expect(policies.map((p) => p.metadata.name)).toEqual(names);
    expect(ofKind(objects, 'ValidatingAdmissionPolicyBinding').map((b) => [b.metadata.name, b.spec])).toEqual(
      names.map((n) => [n, { policyName: n, validationActions: ['Deny'] }]),
    );
    for (const p of policies) {
      expect(p.spec.failurePolicy).toBe('Fail');
      expect(p.spec.matchConditions).toEqual([
        {
          name: 'operator-service-account',
          expression: `request.userInfo.username == "system:serviceaccount:${NS}:op"`,
        },
      ]);
    }
    expect(
      policies.map((p) => [
        p.spec.matchConstraints.resourceRules[0].resources,
        p.spec.matchConstraints.resourceRules[0].operations,
      ]),
    ).toEqual([
      [['deployments', 'statefulsets'], ['UPDATE']],
      [['helmreleases'], ['UPDATE']],
      [['applications'], ['UPDATE']],
      [
        ['secrets', 'configmaps'],
        ['CREATE', 'UPDATE'],
      ],
    ]);
    const off = await render(helm, { admissionPolicy: { enabled: false } });
    expect(off.objects.map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
    expect(off.objects.map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicyBinding');
  });

  it('below Kubernetes 1.30 refuses to install without the admission policy, unless admissionPolicy.enabled is false', async () => {
    const at = (version: string, values: object = {}, apiVersions: string[] = []) =>
      helmTemplate(helm, values, 'seo', {
        chart: OPERATOR_CHART_DIR,
        namespace: NS,
        extra: ['--kube-version', version, ...apiVersions.flatMap((v) => ['--api-versions', v])],
      });
    for (const version of ['1.27.0', '1.29.4']) {
      const refused = await at(version);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(
        `admissionPolicy.enabled needs Kubernetes 1.30 or later (this is v${version})`,
      );
      expect(refused.stderr).toContain('set admissionPolicy.enabled=false');
      const off = await at(version, { admissionPolicy: { enabled: false } });
      expect(off.code, off.stderr).toBe(0);
      expect(off.objects.map((o) => o.kind)).toContain('ClusterRole');
      expect(off.objects.map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
    }
    // A cluster (or --api-versions) listing the kind is believed over the version.
    const listed = await at('1.29.4', {}, ['admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(ofKind(listed.objects, 'ValidatingAdmissionPolicy')).toHaveLength(4);
    const current = await at('1.30.0');
    expect(current.code, current.stderr).toBe(0);
  });

  it('aggregates reading releases into the view role and writing them into edit, unless opted out', async () => {
    const roles = ofKind((await render(helm)).objects, 'ClusterRole');
    const view = roles.find((r) => r.metadata.name === 'seo-static-export-operator-view');
    const edit = roles.find((r) => r.metadata.name === 'seo-static-export-operator-edit');
    const aggregate = (r: KubeObject | undefined) =>
      Object.keys(r?.metadata.labels ?? {}).filter((l) =>
        l.startsWith('rbac.authorization.k8s.io/aggregate-to-'),
      );
    expect(aggregate(view)).toEqual([
      'rbac.authorization.k8s.io/aggregate-to-view',
      'rbac.authorization.k8s.io/aggregate-to-edit',
      'rbac.authorization.k8s.io/aggregate-to-admin',
    ]);
    expect(aggregate(edit)).toEqual([
      'rbac.authorization.k8s.io/aggregate-to-edit',
      'rbac.authorization.k8s.io/aggregate-to-admin',
    ]);
    const read = {
      apiGroups: ['staticexport.dev'],
      resources: ['staticexportreleases', 'agentjobs'],
      verbs: ['get', 'list', 'watch'],
    };
    expect(view?.rules).toEqual([read]);
    expect(edit?.rules).toEqual([
      read,
      {
        apiGroups: ['staticexport.dev'],
        resources: ['staticexportreleases', 'agentjobs'],
        verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'],
      },
    ]);
    const off = ofKind(
      (await render(helm, { rbac: { aggregateToDefaultRoles: false } })).objects,
      'ClusterRole',
    );
    expect(off.map((r) => r.metadata.name)).toEqual(['seo-static-export-operator']);
  });

  it('spreads the two replicas across nodes, softly, and keeps one through drains with a PodDisruptionBudget', async () => {
    const { objects } = await render(helm);
    const selector = findObject(objects, 'Deployment').spec.selector.matchLabels;
    const spread = {
      maxSkew: 1,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: selector },
    };
    expect(podSpec(objects).topologySpreadConstraints).toEqual([spread]);
    const pdb = findObject(objects, 'PodDisruptionBudget');
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: selector } });

    // The user's constraints come after the node spread, or alone with it off.
    const zone = {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
    };
    const both = (await render(helm, { topologySpreadConstraints: [zone] })).objects;
    expect(podSpec(both).topologySpreadConstraints).toEqual([spread, zone]);
    const own = (await render(helm, { spreadAcrossNodes: false, topologySpreadConstraints: [zone] })).objects;
    expect(podSpec(own).topologySpreadConstraints).toEqual([zone]);
    expect(podSpec((await render(helm, { spreadAcrossNodes: false })).objects)).not.toHaveProperty(
      'topologySpreadConstraints',
    );

    // A budget over one replica would only block a drain; off, none at all.
    const single = await render(helm, { replicaCount: 1 });
    expect(single.code, single.stderr).toBe(0);
    expect(ofKind(single.objects, 'PodDisruptionBudget')).toEqual([]);
    const off = await render(helm, { podDisruptionBudget: { enabled: false } });
    expect(ofKind(off.objects, 'PodDisruptionBudget')).toEqual([]);
  });

  it('with openshift sets no user, group or fsGroup ids (the cluster assigns them), in the test pod neither', async () => {
    const ids = ['runAsUser', 'runAsGroup', 'fsGroup'];
    const fixed = await render(helm);
    expect(podSpec(fixed.objects).securityContext).toMatchObject({
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
    });
    const { objects, tests, stderr } = await render(helm, {
      openshift: true,
      securityContext: { runAsUser: 1000 },
    });
    const pods = [podSpec(objects), ofKind(tests, 'Pod')[0]?.spec];
    for (const pod of pods) {
      for (const id of ids) expect(pod.securityContext, stderr).not.toHaveProperty(id);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      for (const c of pod.containers) {
        for (const id of ids) expect(c.securityContext, c.name).not.toHaveProperty(id);
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
      }
    }
    // null on one value leaves out that one only.
    const partial = await render(helm, { podSecurityContext: { fsGroup: null } });
    expect(podSpec(partial.objects).securityContext).not.toHaveProperty('fsGroup');
    expect(podSpec(partial.objects).securityContext).toMatchObject({ runAsUser: 65532 });
  });

  it('renders the optional ServiceMonitor and NetworkPolicy only when enabled', async () => {
    const plain = (await render(helm)).objects.map((o) => o.kind);
    for (const kind of ['ServiceMonitor', 'NetworkPolicy']) expect(plain).not.toContain(kind);
    const { objects } = await render(helm, {
      metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' } } },
      networkPolicy: {
        enabled: true,
        apiServerPeers: [{ ipBlock: { cidr: '10.0.0.1/32' } }],
        adminApiPeers: [{ ipBlock: { cidr: '203.0.113.0/24' } }],
      },
    });
    expect(findObject(objects, 'ServiceMonitor').metadata.labels?.release).toBe('prom');
    expect(findObject(objects, 'ServiceMonitor').spec.endpoints[0]).toMatchObject({
      port: 'metrics',
      path: '/metrics',
      honorLabels: true,
    });
    const egress = findObject(objects, 'NetworkPolicy').spec.egress;
    expect(egress[0]).toEqual({
      ports: [
        { port: 443, protocol: 'TCP' },
        { port: 6443, protocol: 'TCP' },
      ],
      to: [{ ipBlock: { cidr: '10.0.0.1/32' } }],
    });
    expect(egress[1].to).toEqual([{ ipBlock: { cidr: '203.0.113.0/24' } }]);
  });

  it('renders the PrometheusRule and the dashboard only when enabled, naming only metrics the operator serves', async () => {
    const plain = (await render(helm)).objects;
    expect(plain.map((o) => o.kind)).not.toContain('PrometheusRule');
    expect(plain.filter((o) => o.kind === 'ConfigMap')).toEqual([]);
    const { objects } = await render(helm, {
      metrics: {
        prometheusRule: { enabled: true, labels: { release: 'prom' } },
        grafanaDashboard: { enabled: true, annotations: { grafana_folder: 'Operators' } },
      },
    });
    const rule = findObject(objects, 'PrometheusRule');
    expect(rule.metadata.labels?.release).toBe('prom');
    const dashboard = findObject(objects, 'ConfigMap');
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    expect(dashboard.metadata.annotations).toEqual({ grafana_folder: 'Operators' });
    const json = dashboard.data['static-export-operator.json'];
    expect(JSON.parse(json)).toEqual(
      JSON.parse(readFileSync(join(OPERATOR_CHART_DIR, 'dashboards/static-export-operator.json'), 'utf8')),
    );
    const served = await servedMetricNames();
    const named = [...(JSON.stringify(rule.spec) + json).matchAll(/static_export_[a-z_]+/g)].map((m) =>
      m[0].replace(/_(bucket|count|sum)$/, ''),
    );
    expect(named.filter((n) => !served.has(n))).toEqual([]);
  });

  it.each([
    [{ unknown: true }, /unknown|additional propert/i],
    [{ image: { digest: 'sha256:abc' } }, /digest/],
    [{ operator: { apiBaseUrl: 'api.example.com' } }, /apiBaseUrl/],
    [
      { operator: { apiBaseUrl: 'https://api.mintlify.com/v1' } },
      /must not end in \/v1 .*https:\/\/api\.mintlify\.com$/m,
    ],
    [
      { operator: { allowedApiBaseUrls: ['https://proxy.example.com/v1/'] } },
      /allowedApiBaseUrls must not end in \/v1/,
    ],
    [{ operator: { allowedGitUrls: ['git://github.com/acme/gitops.git'] } }, /allowedGitUrls/],
    [{ operator: { allowedGitUrls: ['ssh://git:pw@github.com/acme/gitops.git'] } }, /allowedGitUrls/],
    [{ operator: { allowedGitUrls: ['https://bot:t0ken@github.com/acme/gitops.git'] } }, /allowedGitUrls/],
    [{ operator: { logLevel: 'verbose' } }, /logLevel/],
    [{ watchNamespaces: ['Docs'] }, /watchNamespaces/],
    [{ terminationGracePeriodSeconds: 10 }, /terminationGracePeriodSeconds/],
    [{ extraArgs: ['operator'] }, /extraArgs/],
    [
      { leaderElection: { renewDeadlineSeconds: 15 } },
      /renewDeadlineSeconds must be shorter than leaderElection.leaseDurationSeconds/,
    ],
    [{ leaderElection: { enabled: false } }, /set replicaCount to 1, or enable leader election/],
    [{ trigger: { enabled: true, port: 8080 } }, /trigger.port must differ from metrics.port/],
    [{ trigger: { service: { type: 'ExternalName' } } }, /trigger/],
    [{ trigger: { requestsPerMinute: 0 } }, /requestsPerMinute/],
    [{ networkPolicy: { registries: [{ cidrs: ['10.20.0.5/32'] }] } }, /registries.*ports|ports.*required/i],
    [
      { networkPolicy: { registries: [{ cidrs: [], ports: [5000] }] } },
      /registries.*cidrs|minItems|minimum/i,
    ],
    [{ networkPolicy: { registries: [{ cidrs: ['registry.internal'], ports: [5000] }] } }, /cidrs/],
  ])('refuses %j with an error naming it', async (values, message) => {
    const r = await render(helm, values);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it('lets the operator reach the registries releases follow, with networkPolicy.registries', async () => {
    const plain = findObject(
      (await render(helm, { networkPolicy: { enabled: true } })).objects,
      'NetworkPolicy',
    );
    const { objects } = await render(helm, {
      networkPolicy: {
        enabled: true,
        registries: [
          { cidrs: ['10.20.0.5/32', 'fd00::5/128'], ports: [5000] },
          { cidrs: ['10.30.0.0/16'], ports: [443, 8443] },
        ],
      },
    });
    const egress = findObject(objects, 'NetworkPolicy').spec.egress;
    // After the API server and admin API rules, before DNS.
    expect(egress).toHaveLength(plain.spec.egress.length + 2);
    expect(egress.slice(2, 4)).toEqual([
      {
        to: [{ ipBlock: { cidr: '10.20.0.5/32' } }, { ipBlock: { cidr: 'fd00::5/128' } }],
        ports: [{ port: 5000, protocol: 'TCP' }],
      },
      {
        to: [{ ipBlock: { cidr: '10.30.0.0/16' } }],
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 8443, protocol: 'TCP' },
        ],
      },
    ]);
    expect(egress.at(-1).ports).toEqual([
      { port: 53, protocol: 'UDP' },
      { port: 53, protocol: 'TCP' },
    ]);
    expect(
      (
        await helmLint(
          helm,
          { networkPolicy: { enabled: true, registries: [{ cidrs: ['10.20.0.5/32'], ports: [5000] }] } },
          OPERATOR_CHART_DIR,
        )
      ).code,
    ).toBe(0);
  });

  it('serves the trigger receiver only when enabled: its port, a Service, patch on releases, a NetworkPolicy rule', async () => {
    const plain = await render(helm, { networkPolicy: { enabled: true } });
    expect((container(plain.objects).args as string[]).filter((a) => a.startsWith('--trigger'))).toEqual([]);
    expect(ofKind(plain.objects, 'Service').map((s) => s.metadata.name)).toEqual([
      'seo-static-export-operator-metrics',
    ]);
    const verbsOnReleases = (objects: KubeObject[]) =>
      (findObject(objects, 'ClusterRole').rules as { resources: string[]; verbs: string[] }[])
        .filter((r) => r.resources.includes('staticexportreleases'))
        .flatMap((r) => r.verbs);
    expect(verbsOnReleases(plain.objects)).not.toContain('patch');
    expect(findObject(plain.objects, 'NetworkPolicy').spec.ingress).toHaveLength(1);

    const from = [{ namespaceSelector: { matchLabels: { ci: 'true' } } }];
    const { objects } = await render(helm, {
      networkPolicy: { enabled: true },
      trigger: {
        enabled: true,
        port: 9443,
        service: { type: 'LoadBalancer', port: 443, annotations: { team: 'docs' } },
        from,
      },
    });
    const c = container(objects);
    expect(c.args).toEqual(
      expect.arrayContaining(['--trigger-address=0.0.0.0:9443', '--trigger-requests-per-minute=6']),
    );
    expect(c.ports).toContainEqual({ name: 'trigger', containerPort: 9443, protocol: 'TCP' });
    const service = ofKind(objects, 'Service').find(
      (s) => s.metadata.name === 'seo-static-export-operator-trigger',
    );
    expect(service?.metadata.annotations).toEqual({ team: 'docs' });
    expect(service?.spec).toEqual({
      type: 'LoadBalancer',
      selector: findObject(objects, 'Deployment').spec.selector.matchLabels,
      ports: [{ name: 'trigger', port: 443, targetPort: 'trigger', protocol: 'TCP' }],
    });
    expect(verbsOnReleases(objects)).toContain('patch');
    expect(findObject(objects, 'NetworkPolicy').spec.ingress[1]).toEqual({
      ports: [{ port: 9443, protocol: 'TCP' }],
      from,
    });
  });

  it('runs one replica without leader election', async () => {
    const { objects, stderr } = await render(helm, { leaderElection: { enabled: false }, replicaCount: 1 });
    expect(container(objects)?.args, stderr).toContain('--no-leader-election');
    expect(ofKind(objects, 'Role')).toEqual([]);
  });

  it('has helm test run static-export check with an account that may read only the CRDs, the Lease and pods', async () => {
    const { tests, stderr } = await render(helm, { tests: { enabled: true, timeoutSeconds: 90 } });
    const pod = ofKind(tests, 'Pod')[0];
    expect(pod?.spec.containers[0].args, stderr).toEqual([
      'check',
      `--operator-namespace=${NS}`,
      '--lease-name=seo-static-export-operator',
      '--wait=90s',
      '--no-rbac',
    ]);
    expect(pod?.spec.serviceAccountName).toBe('seo-static-export-operator-check');
    // Not the operator's selector labels: its NetworkPolicy and PDB select those.
    expect(pod?.metadata.labels?.['app.kubernetes.io/name']).toBe('static-export-operator-test');
    expect(ofKind(tests, 'ClusterRole')[0]?.rules).toEqual([
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['staticexportreleases.staticexport.dev', 'agentjobs.staticexport.dev'],
        verbs: ['get'],
      },
    ]);
    expect(ofKind(tests, 'Role')[0]?.rules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['seo-static-export-operator'],
        verbs: ['get'],
      },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    expect((await render(helm, { tests: { enabled: false, timeoutSeconds: 90 } })).tests).toEqual([]);
  });

  it('gives the helm test pod requests and limits, tests.resources sets them', async () => {
    // A namespace with a ResourceQuota on memory refuses a pod without them.
    const defaults = ofKind((await render(helm)).tests, 'Pod')[0]?.spec.containers[0].resources;
    expect(defaults).toEqual({ requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '256Mi' } });
    const resources = { requests: { cpu: '10m', memory: '96Mi' }, limits: { cpu: '1', memory: '192Mi' } };
    const { tests } = await render(helm, { tests: { enabled: true, timeoutSeconds: 90, resources } });
    expect(ofKind(tests, 'Pod')[0]?.spec.containers[0].resources).toEqual(resources);
  });
});
