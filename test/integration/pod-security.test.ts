// Pod Security: every pod the three charts make (their workloads and their `helm test` pods) is
// admitted into a namespace that enforces the `restricted` Pod Security Standard, by the real API
// server's PodSecurity admission. The charts are installed by Helm 4 (kwok runs the pods); the test
// pods are created as `helm test` creates them (kwok never completes a bare pod, so `helm test`
// itself would wait for nothing). A pod short of the profile is refused there: the namespace enforces.
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createNamespace, eventually, kubeconfig, kubectl, kubectlOk } from '../support/cluster/kube.ts';
import {
  CHART_DIR,
  type HelmResult,
  helm,
  helmInstall,
  inlineValues,
  OPERATOR_CHART_DIR,
  parseManifests,
  SIMULATOR_CHART_DIR,
} from '../support/tools/chart.ts';

/** The profile, at the API server's own version of it; `warn` makes it answer for workloads too. */
const RESTRICTED = [
  'pod-security.kubernetes.io/enforce=restricted',
  'pod-security.kubernetes.io/enforce-version=latest',
  'pod-security.kubernetes.io/warn=restricted',
  'pod-security.kubernetes.io/warn-version=latest',
];
const VIOLATES = /violate[s]? PodSecurity/i;
const DIGEST = `sha256:${'0'.repeat(64)}`;

interface Pod {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; ownerReferences?: unknown[] };
  spec: { containers: { name: string; securityContext?: Record<string, unknown> }[] };
  status?: { phase?: string };
}

const namespaces: string[] = [];
/** Releases to uninstall: their cluster-scoped objects (ClusterRoles, admission policies) outlive the namespace. */
const installed: { release: string; ns: string }[] = [];
afterAll(async () => {
  for (const { release, ns } of installed)
    await helm('helm4', ['uninstall', release, '--namespace', ns, '--kubeconfig', kubeconfig()]);
  for (const ns of namespaces) await kubectl(['delete', 'namespace', ns, '--wait=false']);
});

async function restrictedNamespace(prefix: string): Promise<string> {
  const ns = await createNamespace(prefix);
  namespaces.push(ns);
  await kubectlOk(['label', 'namespace', ns, ...RESTRICTED]);
  return ns;
}

/**
 * The release's `helm test` pods, as Helm keeps them with the release; their ServiceAccounts are
 * created first (the API server admits no pod whose account does not exist).
 */
async function testPods(release: string, ns: string): Promise<Pod[]> {
  const hooks = await helm('helm4', [
    'get',
    'hooks',
    release,
    '--namespace',
    ns,
    '--kubeconfig',
    kubeconfig(),
  ]);
  expect(hooks.code, hooks.stderr).toBe(0);
  const tests = (parseManifests(hooks.stdout) as unknown as Pod[]).filter(
    (o) => o.metadata.annotations?.['helm.sh/hook'] === 'test',
  );
  for (const account of tests.filter((o) => o.kind === 'ServiceAccount'))
    await kubectlOk(['apply', '-n', ns, '-f', '-'], stringify(account));
  return tests.filter((o) => o.kind === 'Pod');
}

/** Creates `pod` in `ns` as `helm test` does; the API server's answer. */
const createPod = (pod: Pod, ns: string) => kubectl(['create', '-n', ns, '-f', '-'], stringify(pod));

const CASES: { what: string; chart: string; release: string; values: object }[] = [
  {
    what: 'operator chart, two replicas, the trigger receiver',
    chart: OPERATOR_CHART_DIR,
    release: 'psa-operator',
    // The suite's CRDs are installed already (and owned by no release).
    values: {
      crds: { enabled: false },
      operator: { apiBaseUrl: 'https://api.example.com' },
      trigger: { enabled: true },
    },
  },
  {
    what: 'site chart, init container fetch',
    chart: CHART_DIR,
    release: 'docs',
    values: inlineValues('https://bucket.example.com/docs.tar.gz?X-Amz-Signature=abc'),
  },
  {
    what: 'site chart, the sync sidecar',
    chart: CHART_DIR,
    release: 'docs',
    values: { staticExport: { enabled: true, existingSecret: 'site-values', sync: { enabled: true } } },
  },
  {
    what: 'site chart, a registry image as an image volume',
    chart: CHART_DIR,
    release: 'docs',
    values: {
      staticExport: {
        enabled: true,
        oci: { reference: `registry.example.com/docs/site@${DIGEST}`, imageVolume: true },
      },
    },
  },
  {
    what: 'operator chart with openshift (ids left to the cluster)',
    chart: OPERATOR_CHART_DIR,
    // Another name: the first one's ClusterRole is cluster-scoped.
    release: 'psa-operator-openshift',
    values: {
      crds: { enabled: false },
      operator: { apiBaseUrl: 'https://api.example.com' },
      openshift: true,
    },
  },
  {
    what: 'site chart with openshift',
    chart: CHART_DIR,
    release: 'docs',
    values: {
      ...inlineValues('https://bucket.example.com/docs.tar.gz?X-Amz-Signature=abc'),
      openshift: true,
    },
  },
  {
    what: 'simulator chart',
    chart: SIMULATOR_CHART_DIR,
    release: 'sim',
    values: {},
  },
];

describe('the restricted Pod Security Standard', () => {
  it.each(CASES)('$what: every pod is admitted, the helm test pods too', async (c) => {
    const ns = await restrictedNamespace('psa');
    const result: HelmResult = await helmInstall('helm4', {
      release: c.release,
      chart: c.chart,
      namespace: ns,
      values: c.values,
      extra: ['--wait', '--timeout', '120s'],
    });
    installed.push({ release: c.release, ns });
    // `warn` answers for the Deployments' pod templates at install: no warning, no refusal.
    expect(result.stderr).not.toMatch(VIOLATES);
    expect(result.code, result.stderr).toBe(0);

    // Each Deployment's pods exist (a refused pod would leave its ReplicaSet short, FailedCreate).
    const deployments = JSON.parse(await kubectlOk(['get', 'deployments', '-n', ns, '-o', 'json'])) as {
      items: { metadata: { name: string }; spec: { replicas: number } }[];
    };
    expect(deployments.items.length).toBeGreaterThan(0);
    for (const d of deployments.items) {
      const json = await kubectlOk(['get', 'deployment', d.metadata.name, '-n', ns, '-o', 'json']);
      expect(JSON.parse(json).status.readyReplicas, d.metadata.name).toBe(d.spec.replicas);
    }
    const events = await kubectlOk(['get', 'events', '-n', ns, '--field-selector', 'reason=FailedCreate']);
    expect(events).not.toMatch(VIOLATES);

    const pods = await testPods(c.release, ns);
    // Each chart has one: operator `check`, site `test-pages`, simulator `export`.
    expect(pods.map((p) => p.metadata.name)).toHaveLength(1);
    for (const pod of pods) {
      const created = await createPod(pod, ns);
      expect(created.stderr, pod.metadata.name).not.toMatch(VIOLATES);
      expect(created.code, created.stderr).toBe(0);
      await eventually(`${pod.metadata.name} running`, async () => {
        const p = JSON.parse(
          await kubectlOk(['get', 'pod', pod.metadata.name, '-n', ns, '-o', 'json']),
        ) as Pod;
        return p.status?.phase === 'Running' || p.status?.phase === 'Succeeded';
      });
    }
  });

  it('refuses a pod short of the profile there (the namespace enforces it)', async () => {
    const ns = await restrictedNamespace('psa-refused');
    const sim = await helmInstall('helm4', {
      release: 'sim',
      chart: SIMULATOR_CHART_DIR,
      namespace: ns,
      values: {},
      extra: ['--wait', '--timeout', '120s'],
    });
    installed.push({ release: 'sim', ns });
    expect(sim.code, sim.stderr).toBe(0);
    const [pod] = await testPods('sim', ns);
    if (!pod) throw new Error('the simulator chart has no helm test pod');
    // The chart's pod with its capabilities left as the runtime gives them: restricted wants ALL dropped.
    const short: Pod = {
      ...pod,
      spec: {
        ...pod.spec,
        containers: pod.spec.containers.map((ctr) => ({
          ...ctr,
          securityContext: { ...ctr.securityContext, capabilities: {} },
        })),
      },
    };
    const refused = await createPod(short, ns);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/violates PodSecurity "restricted:latest"/);
    expect(refused.stderr).toMatch(/capabilities/);
  });
});
