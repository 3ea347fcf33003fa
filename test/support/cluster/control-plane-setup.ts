// vitest global setup of the `integration` project: one real control plane for the whole run,
// or the disposable cluster named by STATIC_EXPORT_TEST_KUBECONFIG (kind, k3d, a real one).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ControlPlane, processesUsing } from '../../../scripts/control-plane/control-plane.ts';
import { testKubeVersion } from '../../../scripts/control-plane/kube-versions.ts';
import { nodeLeftovers } from '../../../scripts/control-plane/node.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    /** Set when the suite runs its own control plane (tests that restart components need it). */
    controlPlaneDir: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  // STATIC_EXPORT_TEST_KUBE_VERSION: CI runs some files against the oldest version the charts claim.
  const kubeVersion = testKubeVersion();
  const external = process.env.STATIC_EXPORT_TEST_KUBECONFIG;
  if (external) {
    project.provide('kubeconfig', external);
    project.provide('controlPlaneDir', undefined);
    return;
  }
  const cp = await ControlPlane.start(mkdtempSync(join(tmpdir(), 'static-export-cp-')), kubeVersion);
  project.provide('kubeconfig', cp.kubeconfig);
  project.provide('controlPlaneDir', cp.dir);
  return async () => {
    await cp.stop();
    // The real node, if a test started it, must have taken everything it made on the host with it.
    const leftovers = await nodeLeftovers(cp.dir);
    if (leftovers.length) throw new Error(`The real node left on the host:\n  ${leftovers.join('\n  ')}`);
    // Every process the run started against this control plane must be gone, restarted ones included.
    const left = await processesUsing(cp.dir);
    if (left.length) {
      for (const p of left) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      throw new Error(
        `The test run left ${left.length} process(es) of its control plane running (now killed):\n` +
          left.map((p) => `  ${p.pid} ${p.command.slice(0, 160)}`).join('\n'),
      );
    }
  };
}
