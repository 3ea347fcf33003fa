// The site chart installed by Helm 4 and Helm 3 on the real control plane: the API server accepts
// every object, the Deployment becomes available (kwok runs its pods), and the release Helm keeps
// never holds the link in clear.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createNamespace, eventually, kubeconfig, kubectlOk } from '../support/cluster/kube.ts';
import {
  A_VERSION,
  CHART_DIR,
  HELMS,
  type HelmName,
  helm,
  helmInstall,
  inlineValues,
} from '../support/tools/chart.ts';

const LINK = 'https://bundles.example.com/se_9/bundle.tar.gz?expires=1900000000&sig=aW50ZWdyYXRpb24';
const LINK_B64 = Buffer.from(LINK).toString('base64');
let ns: string;

const EVERYTHING_OPTIONAL = {
  deploymentKind: 'airGapped',
  ingress: { enabled: true, hosts: [{ host: 'docs.example.com' }] },
  autoscaling: { enabled: true },
  podDisruptionBudget: { enabled: true },
  networkPolicy: { enabled: true, bundleHostPeers: [{ ipBlock: { cidr: '10.20.0.0/16' } }] },
};

function install(name: HelmName, release: string, values: object) {
  return helmInstall(name, {
    release,
    chart: CHART_DIR,
    namespace: ns,
    extra: ['--wait', '--timeout', '90s'],
    values,
  });
}

async function deploymentAvailable(name: string) {
  return eventually(`deployment ${name} available`, async () => {
    const d = JSON.parse(await kubectlOk(['get', 'deployment', name, '-n', ns, '-o', 'json']));
    return d.status?.availableReplicas >= 1 ? d : undefined;
  });
}

beforeAll(async () => {
  ns = await createNamespace('site-chart');
  // What the operator's values Secret must hold for the existing-Secret mode.
  await kubectlOk(
    ['apply', '-f', '-'],
    stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'docs-site-values', namespace: ns },
      stringData: { bundleUrl: LINK, version: A_VERSION },
    }),
  );
});

afterAll(async () => {
  if (ns) await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
});

describe('helm install on a real API server', () => {
  for (const name of Object.keys(HELMS) as HelmName[]) {
    it(`${name}: existing-Secret mode with every optional object; Helm never sees the link`, async () => {
      const release = `existing-${name}`;
      const installed = await install(name, release, {
        staticExport: { enabled: true, existingSecret: 'docs-site-values' },
        ...EVERYTHING_OPTIONAL,
      });
      expect(installed.code, installed.stderr).toBe(0);
      const deployment = await deploymentAvailable(`${release}-static-export-site`);
      expect(deployment.metadata.labels['staticexport.dev/values-secret']).toBe('docs-site-values');
      const manifest = await helm(name, ['get', 'all', release, '--kubeconfig', kubeconfig(), '-n', ns]);
      expect(manifest.code, manifest.stderr).toBe(0);
      expect(manifest.stdout).toContain('kind: NetworkPolicy');
      expect(manifest.stdout).not.toContain(LINK);
      expect(manifest.stdout).not.toContain(LINK_B64);
    });

    it(`${name}: inline mode; the link is in the chart's Secret only, base64 like any Secret`, async () => {
      const release = `inline-${name}`;
      const installed = await install(
        name,
        release,
        inlineValues(LINK, { staticExport: { version: A_VERSION } }),
      );
      expect(installed.code, installed.stderr).toBe(0);
      const deployment = await deploymentAvailable(`${release}-static-export-site`);
      expect(deployment.spec.template.metadata.annotations['staticexport.dev/version']).toBe(A_VERSION);
      const manifest = await helm(name, ['get', 'manifest', release, '--kubeconfig', kubeconfig(), '-n', ns]);
      expect(manifest.stdout).not.toContain(LINK);
      expect(manifest.stdout.split(LINK_B64)).toHaveLength(2);
      const secret = JSON.parse(
        await kubectlOk(['get', 'secret', `${release}-static-export-site`, '-n', ns, '-o', 'json']),
      );
      expect(Buffer.from(secret.data.bundleUrl, 'base64').toString()).toBe(LINK);
    });
  }
});
