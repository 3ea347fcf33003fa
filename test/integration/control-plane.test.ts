// Proves the local control plane is real: controller-manager creates ReplicaSets, the scheduler
// binds pods to the kwok node, kwok makes them Ready, and a template change rolls out.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPONENTS, ControlPlane, processesUsing } from '../../scripts/control-plane/control-plane.ts';
import { createNamespace, eventually, kubectl, kubectlOk } from '../support/cluster/kube.ts';

const deployment = (ns: string, version: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {content-version: "${version}"}}
    spec:
      containers: [{name: nginx, image: nginx:1.27}]
`;

interface Deploy {
  status: {
    updatedReplicas?: number;
    readyReplicas?: number;
    replicas?: number;
    observedGeneration?: number;
  };
  metadata: { generation: number };
}

async function rolledOut(ns: string): Promise<boolean> {
  const d = JSON.parse(await kubectlOk(['get', 'deploy', 'web', '-n', ns, '-o', 'json'])) as Deploy;
  const s = d.status;
  return (
    s.observedGeneration === d.metadata.generation &&
    s.updatedReplicas === 2 &&
    s.readyReplicas === 2 &&
    s.replicas === 2
  );
}

describe('local control plane', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await createNamespace('smoke');
  });
  afterAll(async () => {
    await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs a Deployment to Ready pods on a kwok node and rolls out a template change', async () => {
    await kubectlOk(['apply', '-f', '-'], deployment(ns, 'v1'));
    await eventually('first rollout', () => rolledOut(ns)).catch(async (e) => {
      // What the cluster looked like, so a failure here can be diagnosed from the CI log alone.
      const state = await kubectl(['get', 'nodes,deploy,rs,pods', '-A', '-o', 'wide']);
      const node = await kubectl([
        'get',
        'node',
        'kwok-node-0',
        '-o',
        'jsonpath={.spec.taints} {.status.conditions}',
      ]);
      throw new Error(`${(e as Error).message}\n${state.stdout}\n${node.stdout}`);
    });

    const pods = JSON.parse(await kubectlOk(['get', 'pods', '-n', ns, '-o', 'json'])) as {
      items: { spec: { nodeName?: string }; status: { conditions?: { type: string; status: string }[] } }[];
    };
    expect(pods.items).toHaveLength(2);
    for (const p of pods.items) {
      expect(p.spec.nodeName).toBe('kwok-node-0');
      expect(p.status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    const firstRs = (await kubectlOk(['get', 'rs', '-n', ns, '-o', 'name'])).trim().split('\n');
    expect(firstRs).toHaveLength(1);

    await kubectlOk(['apply', '-f', '-'], deployment(ns, 'v2'));
    await eventually('second rollout', () => rolledOut(ns));
    const rs = JSON.parse(await kubectlOk(['get', 'rs', '-n', ns, '-o', 'json'])) as {
      items: { metadata: { name: string }; spec: { replicas: number } }[];
    };
    expect(rs.items).toHaveLength(2);
    const old = rs.items.find((r) => `replicaset.apps/${r.metadata.name}` === firstRs[0]);
    expect(old?.spec.replicas).toBe(0);
  });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('control plane lifecycle', () => {
  it('survives an API server restart and leaves no process or file behind when stopped', async () => {
    const cp = await ControlPlane.start(mkdtempSync(join(tmpdir(), 'static-export-cp-')));
    try {
      const pids = () =>
        JSON.parse(readFileSync(join(cp.dir, 'state.json'), 'utf8')).pids as Record<string, number>;
      expect(Object.keys(pids()).sort()).toEqual([...COMPONENTS].sort());
      const before = pids();
      // Restarted by another instance, as a test worker does through ControlPlane.attach.
      await ControlPlane.attach(cp.dir).restartComponent('kube-apiserver');
      for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
        expect(pids()[c]).not.toBe(before[c]);
      expect((await cp.get('/api/v1/nodes/kwok-node-0')).status).toBe(200);

      const all = [...Object.values(before), ...Object.values(pids())];
      await cp.stop();
      expect(all.filter(alive)).toEqual([]);
      expect(await processesUsing(cp.dir)).toEqual([]);
      expect(existsSync(cp.dir)).toBe(false);
    } finally {
      if (existsSync(cp.dir)) await cp.stop();
    }
  });
});
