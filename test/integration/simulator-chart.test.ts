// The simulator chart (for trying only) installed on the real control plane: by Helm 4 with the
// quickstart's own command (docs/quickstart.md), by Helm 3 under another release name. The API
// server accepts its objects, the Deployment becomes available (kwok runs its pod), and the admin
// key it generated survives `helm upgrade` (the chart looks its Secret up), so a release naming
// that Secret keeps working; a key set in the values replaces it without touching the pod.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, eventually, kubeconfig, kubectl, kubectlOk } from '../support/cluster/kube.ts';
import { INSTALL_SIMULATOR, QUICKSTART_NS, runStep } from '../support/cluster/quickstart.ts';
import { HELMS, type HelmName, helm, SIMULATOR_CHART_DIR, valuesFile } from '../support/tools/chart.ts';

const NAME = 'static-export-simulator';
/** Helm 3's namespace; Helm 4 installs into the quickstart's. */
let helm3Ns: string;
let ns: string;

beforeAll(async () => {
  helm3Ns = await createNamespace('sim-chart');
});

afterAll(async () => {
  if (helm3Ns) await kubectl(['delete', 'namespace', helm3Ns, '--wait=false']);
  // The real node's quickstart, later in the run, creates it again.
  await kubectl(['delete', 'namespace', QUICKSTART_NS, '--ignore-not-found', '--wait']);
});

const helmIn = async (name: HelmName, args: string[], values?: object) =>
  helm(name, [
    ...args,
    '--kubeconfig',
    kubeconfig(),
    '--namespace',
    ns,
    ...(values ? ['-f', await valuesFile(values)] : []),
  ]);

async function adminKey(release: string): Promise<string> {
  const data = await kubectlOk(['get', 'secret', release, '-n', ns, '-o', 'jsonpath={.data.adminKey}']);
  return Buffer.from(data, 'base64').toString();
}

interface Deployment {
  metadata: { generation: number };
  spec: {
    template: {
      spec: { containers: { args: string[] }[] };
    };
  };
  status: { availableReplicas?: number; observedGeneration?: number };
}

async function deployment(release: string): Promise<Deployment> {
  return JSON.parse(await kubectlOk(['get', 'deployment', release, '-n', ns, '-o', 'json'])) as Deployment;
}

describe('helm install and upgrade on a real API server', () => {
  for (const name of Object.keys(HELMS) as HelmName[]) {
    it(`${name}: objects created and available; the generated key kept by upgrades, a given one taking over`, async () => {
      // The quickstart's command under Helm 4; under another release name the objects are
      // <release>-static-export-simulator.
      const quickstart = name === 'helm4';
      ns = quickstart ? QUICKSTART_NS : helm3Ns;
      const release = quickstart ? NAME : 'sim3';
      const fullname = quickstart ? NAME : `sim3-${NAME}`;
      const installed = quickstart
        ? await runStep(INSTALL_SIMULATOR)
        : await helmIn(name, ['install', release, SIMULATOR_CHART_DIR, '--wait', '--timeout', '90s']);
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stdout).toContain('FOR TRYING ONLY');
      expect(installed.stdout).toContain(`Admin API:    http://${fullname}.${ns}.svc`);

      const first = await deployment(fullname);
      expect(first.status.availableReplicas).toBe(1);
      const service = JSON.parse(await kubectlOk(['get', 'service', fullname, '-n', ns, '-o', 'json']));
      expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
      const key = await adminKey(fullname);
      expect(key).toMatch(/^mint_[A-Za-z0-9]{40}$/);

      // An upgrade changing something else keeps the key, and the pod is not restarted for it.
      const upgraded = await helmIn(name, ['upgrade', release, SIMULATOR_CHART_DIR, '--wait'], {
        exportDuration: '1s',
      });
      expect(upgraded.code, upgraded.stderr).toBe(0);
      expect(await adminKey(fullname)).toBe(key);
      const second = await deployment(fullname);
      expect(second.spec.template.spec.containers[0]?.args).toContain('--export-duration=1s');

      // A key given in the values replaces it in the Secret, and the pod is left alone: the
      // simulator reads the Secret's file again, so nothing on the pod derives from the key.
      const given = `mint_given${name}0123456789`;
      const withKey = await helmIn(name, ['upgrade', release, SIMULATOR_CHART_DIR], {
        exportDuration: '1s',
        adminKey: given,
      });
      expect(withKey.code, withKey.stderr).toBe(0);
      expect(await adminKey(fullname)).toBe(given);
      const third = await deployment(fullname);
      expect(third.metadata.generation).toBe(second.metadata.generation);
      expect(third.spec.template).toEqual(second.spec.template);
      // Back to no key in the values: the one in the Secret stays.
      const unset = await helmIn(name, ['upgrade', release, SIMULATOR_CHART_DIR], {});
      expect(unset.code, unset.stderr).toBe(0);
      expect(await adminKey(fullname)).toBe(given);
      await eventually('the upgraded Deployment available', async () => {
        const d = await deployment(fullname);
        return d.status.observedGeneration === d.metadata.generation && d.status.availableReplicas === 1;
      });

      // Helm's record of the release holds the key only inside the Secret it rendered.
      const manifest = await helmIn(name, ['get', 'manifest', release]);
      expect(manifest.stdout).not.toContain(given);
      const uninstalled = await helmIn(name, ['uninstall', release, '--wait']);
      expect(uninstalled.code, uninstalled.stderr).toBe(0);
    });
  }
});
