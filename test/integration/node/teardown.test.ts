// Stopping the real node leaves nothing on the host, even with a pod running and after its kubelet
// and containerd crashed: no process (shims and containers included) or shim socket, no mount under
// the cluster dir, no bridge or veth, no kube-proxy nftables table, no iptables chain of the kubelet,
// no pod cgroup or file in the host's shared directories.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ControlPlane, processesUsing } from '../../../scripts/control-plane/control-plane.ts';
import {
  NODE_IP,
  nodeLeftovers,
  nodePaths,
  ON_REAL_NODE,
  REAL_NODE,
} from '../../../scripts/control-plane/node.ts';
import { runProcess } from '../../../scripts/run-process.ts';
import { createNamespace, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS, realNode } from '../../support/cluster/real-node.ts';

const pod = (ns: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'sleeper', namespace: ns },
  spec: {
    ...ON_REAL_NODE,
    containers: [{ name: 'sleep', image: 'docker.io/library/busybox:1.37', command: ['sleep', '3600'] }],
  },
});

/**
 * Live shims and the API server's forwarder on the node address; an exited process may stay a zombie
 * for a while here (this machine's init reaps slowly).
 */
const nodeProcesses = async () =>
  (await runProcess('ps', ['-ww', '-eo', 'stat=,args='])).stdout
    .split('\n')
    .filter((p) => (p.includes('containerd-shim') || p.includes(`${NODE_IP}:`)) && !p.startsWith('Z'));

const SHIM_SOCKETS = '/run/containerd/s';
const shimSocketsNow = () =>
  existsSync(SHIM_SOCKETS) ? readdirSync(SHIM_SOCKETS).map((f) => join(SHIM_SOCKETS, f)) : [];

/** Runs a pod on the real node, checks the host shows it, stops the node and checks nothing is left. */
async function stopWithPodRunning(crash: (cp: ControlPlane) => Promise<void>): Promise<void> {
  const cp = await realNode();
  const ns = await createNamespace('real-teardown');
  try {
    await kubectlOk(['apply', '-f', '-'], JSON.stringify(pod(ns)));
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/sleeper', '-n', ns, '--timeout=60s']);
    // What the checks below look for is there while the node runs.
    const running = (await nodeLeftovers(cp.dir)).map((l) => l.split(' ')[0]);
    expect(running).toEqual(
      expect.arrayContaining(['mount', 'link', 'nftables', 'iptables-save:', 'file', 'cgroup']),
    );
    expect(await nodeProcesses()).not.toEqual([]);
    // containerd 1.6 keeps its shims' sockets in a fixed place, named by hashes: these are the node's.
    const shimSockets = shimSocketsNow();
    expect(shimSockets).not.toEqual([]);

    await crash(cp);
    await cp.stopNode();
    expect(await nodeLeftovers(cp.dir)).toEqual([]);
    expect(await processesUsing(nodePaths(cp.dir).root)).toEqual([]);
    expect(await nodeProcesses()).toEqual([]);
    expect(shimSockets.filter((f) => existsSync(f))).toEqual([]);
    expect((await kubectl(['get', 'node', REAL_NODE])).stderr).toContain('NotFound');
    const slice = await kubectl(['get', 'endpointslice', 'kubernetes', '-n', 'default']);
    expect(slice.stderr).toContain('NotFound');
  } finally {
    await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  }
}

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('stopping the real node', () => {
  it(
    'removes its pods, processes, mounts, network and rules',
    () => stopWithPodRunning(async () => {}),
    REAL_NODE_START_TIMEOUT_MS,
  );

  it(
    'removes them too after the kubelet and containerd were killed',
    () =>
      stopWithPodRunning(async (cp) => {
        // The containers and their shims outlive both: the CRI cannot stop them any more.
        await cp.stopComponent('kubelet', 'SIGKILL');
        await cp.stopComponent('containerd', 'SIGKILL');
      }),
    REAL_NODE_START_TIMEOUT_MS,
  );
});
