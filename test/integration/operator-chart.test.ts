// The operator chart on the real control plane, installed by Helm 4 and Helm 3: CRDs established
// and kept, RBAC bound, the Deployment available (kwok runs its pods), CRDs upgraded with the
// chart, and the rendered manifests accepted by a server-side dry-run.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  createNamespace,
  eventually,
  hasAdmissionPolicies,
  installCrds,
  KUBECTL,
  kubeconfig,
  kubectl,
  kubectlOk,
  run,
} from '../support/cluster/kube.ts';
import { applyRelease } from '../support/cluster/resources.ts';
import {
  HELMS,
  type HelmName,
  helm,
  OPERATOR_CHART_DIR,
  parseManifests,
  valuesFile,
} from '../support/tools/chart.ts';

const CLUSTER_SCOPED = new Set([
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
const CRDS = ['staticexportreleases.staticexport.dev', 'agentjobs.staticexport.dev'];
/** Below Kubernetes 1.30 (CI's oldest-Kubernetes step) the chart installs only without its admission policies. */
let admissionPolicies = false;
let VALUES: object = {};
const namespaces: string[] = [];
// A name no other test installs: its cluster-scoped objects must not exist yet ("created").
const DRY_RUN_RELEASE = 'opchart-dry-run';

async function namespace(prefix: string) {
  const ns = await createNamespace(prefix);
  namespaces.push(ns);
  return ns;
}

const helmIn = (name: HelmName, ns: string, args: string[]) =>
  helm(name, [...args, '--kubeconfig', kubeconfig(), '--namespace', ns]);

/** What README.md tells users whose CRDs were applied with kubectl (or kept by an earlier release). */
async function adoptCrds(release: string, ns: string) {
  for (const crd of CRDS) {
    await kubectlOk(['label', 'crd', crd, 'app.kubernetes.io/managed-by=Helm', '--overwrite']);
    await kubectlOk([
      'annotate',
      'crd',
      crd,
      `meta.helm.sh/release-name=${release}`,
      `meta.helm.sh/release-namespace=${ns}`,
      '--overwrite',
    ]);
  }
}

/** A copy of the chart whose StaticExportRelease CRD has one more printer column. */
function chartWithChangedCrd(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'operator-chart-')), 'static-export-operator');
  cpSync(OPERATOR_CHART_DIR, dir, { recursive: true });
  const file = join(dir, 'templates/crds/staticexportreleases.staticexport.dev.yaml');
  const text = readFileSync(file, 'utf8');
  const changed = text.replace(
    /( *)- additionalPrinterColumns:\n/,
    (m, indent: string) =>
      `${m}${indent}    - jsonPath: .spec.domain\n${indent}      name: TestColumn\n${indent}      type: string\n`,
  );
  expect(changed).not.toBe(text);
  writeFileSync(file, changed);
  return dir;
}

const printerColumns = async () =>
  (
    JSON.parse(await kubectlOk(['get', 'crd', CRDS[0] as string, '-o', 'json'])) as {
      spec: { versions: { additionalPrinterColumns: { name: string }[] }[] };
    }
  ).spec.versions[0]?.additionalPrinterColumns.map((c) => c.name);

beforeAll(async () => {
  await installCrds();
  admissionPolicies = await hasAdmissionPolicies();
  VALUES = {
    operator: { apiBaseUrl: 'https://api.example.com' },
    ...(admissionPolicies ? {} : { admissionPolicy: { enabled: false } }),
  };
});

afterAll(async () => {
  // The CRDs as crds/ has them again, for the test files after this one.
  await installCrds();
  for (const ns of namespaces) await kubectl(['delete', 'namespace', ns, '--wait=false']);
});

describe('helm install, upgrade, uninstall', () => {
  for (const name of Object.keys(HELMS) as HelmName[]) {
    it(`${name}: CRDs established, RBAC bound, Deployment available; upgrade updates a changed CRD; uninstall keeps CRDs and releases`, async () => {
      const ns = await namespace(`opchart-${name}`);
      const release = `seo-${name}`;
      const fullname = `${release}-static-export-operator`;
      const sa = `system:serviceaccount:${ns}:${fullname}`;
      if (name === 'helm4') {
        // A cluster without the CRDs: Helm creates them and owns every field.
        await kubectlOk(['delete', 'crd', ...CRDS, '--wait']);
      } else {
        // CRDs `kubectl apply` wrote (or another release kept): adopted as README.md says.
        await installCrds();
        await adoptCrds(release, ns);
      }
      const values = await valuesFile(VALUES);
      const installed = await helmIn(name, ns, [
        'install',
        release,
        OPERATOR_CHART_DIR,
        '--wait',
        '--timeout',
        '120s',
        '-f',
        values,
      ]);
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stdout).toContain(`The static-export operator runs as Deployment ${fullname}`);

      for (const crd of CRDS)
        await kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crd}`]);
      const canI = async (verb: string, resource: string, where: string[]) =>
        (await kubectl(['auth', 'can-i', verb, resource, '--as', sa, ...where])).stdout.trim();
      expect(
        await canI('patch', 'staticexportreleases.staticexport.dev', [
          '--subresource=status',
          '-n',
          'anywhere',
        ]),
      ).toBe('yes');
      expect(await canI('watch', 'secrets', ['--all-namespaces'])).toBe('yes');
      expect(await canI('update', `leases.coordination.k8s.io/${fullname}`, ['-n', ns])).toBe('yes');
      expect(await canI('delete', 'secrets', ['-n', ns])).toBe('no');
      expect(await canI('update', 'leases.coordination.k8s.io/other', ['-n', ns])).toBe('no');
      const policies = ['workloads', 'flux-helmreleases', 'argo-applications', 'secrets-configmaps'].map(
        (p) => `validatingadmissionpolicy/${ns}-${fullname}-${p}`,
      );
      if (admissionPolicies) await kubectlOk(['get', ...policies]);
      const deployment = JSON.parse(await kubectlOk(['get', 'deployment', fullname, '-n', ns, '-o', 'json']));
      expect(deployment.status.availableReplicas).toBe(2);

      await applyRelease(ns, 'survivor');
      expect(await printerColumns()).not.toContain('TestColumn');
      const upgraded = await helmIn(name, ns, [
        'upgrade',
        release,
        chartWithChangedCrd(),
        '--wait',
        '--timeout',
        '120s',
        '-f',
        values,
      ]);
      expect(upgraded.code, upgraded.stderr).toBe(0);
      expect(await printerColumns()).toContain('TestColumn');

      const uninstalled = await helmIn(name, ns, ['uninstall', release, '--wait']);
      expect(uninstalled.code, uninstalled.stderr).toBe(0);
      expect(uninstalled.stdout + uninstalled.stderr).toMatch(/kept due to the resource policy/i);
      for (const crd of CRDS) await kubectlOk(['get', 'crd', crd]);
      await kubectlOk(['get', 'ser', 'survivor', '-n', ns]);
      await eventually('the Deployment, ClusterRole and admission policies gone', async () => {
        const left = await kubectl(['get', `deployment/${fullname}`, '-n', ns]);
        const role = await kubectl(['get', `clusterrole/${fullname}`]);
        const policy = admissionPolicies
          ? await kubectl(['get', '--ignore-not-found', '-o', 'name', ...policies])
          : undefined;
        return left.code !== 0 && role.code !== 0 && (policy?.stdout.trim() ?? '') === '';
      });
    });
  }
});

describe('below Kubernetes 1.30', () => {
  it('the chart refuses to install with its admission policy, saying what to set', async ({ skip }) => {
    if (admissionPolicies) return skip('this API server has ValidatingAdmissionPolicy v1');
    const ns = await namespace('opchart-old');
    for (const name of Object.keys(HELMS) as HelmName[]) {
      const refused = await helmIn(name, ns, [
        'install',
        'seo-old',
        OPERATOR_CHART_DIR,
        '-f',
        await valuesFile({ operator: { apiBaseUrl: 'https://api.example.com' }, crds: { enabled: false } }),
      ]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(
        /admissionPolicy\.enabled needs Kubernetes 1\.30 or later \(this is v1\.2\d\./,
      );
      expect(refused.stderr).toContain('set admissionPolicy.enabled=false');
    }
    expect((await kubectl(['get', 'deployment', '-n', ns, '-o', 'name'])).stdout.trim()).toBe('');
  });
});

describe('server-side dry-run of the rendered manifests', () => {
  const WITH_TRIGGER = {
    trigger: { enabled: true, from: [{ namespaceSelector: { matchLabels: { ci: 'true' } } }] },
    networkPolicy: { enabled: true },
  };
  it.each(
    (Object.keys(HELMS) as HelmName[]).flatMap((name) => [
      [name, 'default values', false, {}] as const,
      [name, 'namespaced RBAC', true, {}] as const,
      [name, 'the trigger Service and its NetworkPolicy rule', false, WITH_TRIGGER] as const,
    ]),
  )('%s, %s: the API server accepts every object', async (name, _, namespacedRbac, extra) => {
    const ns = await namespace('opchart-dry');
    const watched = [await namespace('opchart-w1'), await namespace('opchart-w2')];
    const rendered = await helm(name, [
      'template',
      DRY_RUN_RELEASE,
      OPERATOR_CHART_DIR,
      '--namespace',
      ns,
      '-f',
      await valuesFile({ ...VALUES, ...extra, ...(namespacedRbac ? { watchNamespaces: watched } : {}) }),
    ]);
    expect(rendered.code, rendered.stderr).toBe(0);
    // What helm install does: namespaced objects without a namespace go to the release's; `helm
    // test`'s objects wait for `helm test` (node/operator.test.ts runs it).
    const objects = parseManifests(rendered.stdout)
      .filter((o) => o.metadata.annotations?.['helm.sh/hook'] !== 'test')
      .map((o) =>
        CLUSTER_SCOPED.has(o.kind) || o.metadata.namespace
          ? o
          : { ...o, metadata: { ...o.metadata, namespace: ns } },
      );
    const applied = await run(
      KUBECTL,
      ['--kubeconfig', kubeconfig(), 'apply', '--dry-run=server', '-f', '-'],
      objects.map((o) => stringify(o)).join('---\n'),
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(
      `deployment.apps/${DRY_RUN_RELEASE}-static-export-operator created (server dry run)`,
    );
    const roles = applied.stdout.match(
      new RegExp(
        `^role\\.rbac\\.authorization\\.k8s\\.io/${DRY_RUN_RELEASE}-static-export-operator created`,
        'gm',
      ),
    );
    const clusterRoles = applied.stdout.match(
      new RegExp(
        `^clusterrole\\.rbac\\.authorization\\.k8s\\.io/${DRY_RUN_RELEASE}-static-export-operator created`,
        'gm',
      ),
    );
    expect([roles?.length ?? 0, clusterRoles?.length ?? 0]).toEqual(namespacedRbac ? [2, 0] : [0, 1]);
    if ('trigger' in extra) {
      expect(applied.stdout).toContain(
        `service/${DRY_RUN_RELEASE}-static-export-operator-trigger created (server dry run)`,
      );
      expect(applied.stdout).toContain(
        `networkpolicy.networking.k8s.io/${DRY_RUN_RELEASE}-static-export-operator created (server dry run)`,
      );
    }
  });
});
