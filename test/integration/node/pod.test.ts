// A pod really runs on the real node: its init container writes the page its main container serves
// (busybox httpd), the readiness probe passes, the Service's ClusterIP answers from the host through
// kube-proxy and by name through the cluster DNS (CoreDNS), kubectl logs, exec and port-forward reach
// the container through the kubelet, the pod reaches the API server through the `kubernetes` Service
// as its service account, and an image pushed to the node under a ghcr.io name is pulled by it.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import { runProcess } from '../../../scripts/run-process.ts';
import {
  createNamespace,
  eventually,
  KUBECTL,
  kubeconfig,
  kubectl,
  kubectlOk,
  ROOT,
} from '../../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS, realNode } from '../../support/cluster/real-node.ts';

const BUSYBOX = 'docker.io/library/busybox:1.37';

const manifests = (ns: string) => ({
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
      spec: {
        ...ON_REAL_NODE,
        volumes: [
          { name: 'www', emptyDir: {} },
          // The suite's kubectl (static) as an in-cluster client: in-cluster config, the pod's token.
          { name: 'kubectl', hostPath: { path: KUBECTL, type: 'File' } },
        ],
        initContainers: [
          {
            name: 'write',
            image: BUSYBOX,
            command: ['sh', '-c', `echo served from ${ns} > /www/index.html && echo wrote index.html`],
            volumeMounts: [{ name: 'www', mountPath: '/www' }],
          },
        ],
        containers: [
          {
            name: 'httpd',
            image: BUSYBOX,
            command: ['httpd', '-f', '-p', '8080', '-h', '/www'],
            ports: [{ containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
            volumeMounts: [
              { name: 'www', mountPath: '/www' },
              { name: 'kubectl', mountPath: '/bin/kubectl', readOnly: true },
            ],
          },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'site', namespace: ns },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    },
  ],
});

async function get(url: string): Promise<string | undefined> {
  const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  return r.ok ? r.text() : undefined;
}

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('a pod on the real node', () => {
  let ns: string;
  beforeAll(async () => {
    await realNode();
    ns = await createNamespace('real-pod');
  }, REAL_NODE_START_TIMEOUT_MS);
  afterAll(async () => {
    await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs its init and main containers, turns Ready and answers through its Service', async () => {
    await kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests(ns)));
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/web', '-n', ns, '--timeout=60s']);
    const ip = await kubectlOk(['get', 'service', 'site', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}']);
    // kube-proxy programs the Service once it sees the ready endpoint, a moment after the pod.
    const page = await eventually('the page through the ClusterIP', () => get(`http://${ip}/`), 30_000);
    expect(page).toBe(`served from ${ns}\n`);
  });

  it('gives the containers’ logs and runs commands in them', async () => {
    expect(await kubectlOk(['logs', 'web', '-n', ns, '-c', 'write'])).toBe('wrote index.html\n');
    expect(await kubectlOk(['exec', 'web', '-n', ns, '-c', 'httpd', '--', 'cat', '/www/index.html'])).toBe(
      `served from ${ns}\n`,
    );
  });

  it('finds Services by name through the cluster DNS, and no name outside the cluster', async () => {
    const inPod = (...args: string[]) => kubectl(['exec', 'web', '-n', ns, '-c', 'httpd', '--', ...args]);
    // The short name, as the site chart's test pod asks for it: the pod's search path completes it.
    expect((await inPod('wget', '-qO-', 'http://site/')).stdout).toBe(`served from ${ns}\n`);
    // Nothing is forwarded off the machine: other names fail at once.
    expect(await inPod('nslookup', 'example.com')).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('SERVFAIL'),
    });
  });

  it('reaches the API server through the kubernetes Service as its service account', async () => {
    const inPod = (...args: string[]) =>
      kubectl(['exec', 'web', '-n', ns, '-c', 'httpd', '--', 'kubectl', ...args]);
    const whoami = await inPod('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
    expect(whoami.stdout).toBe(`system:serviceaccount:${ns}:default`);
    // Authorized as that account: its RBAC (none) applies, not the suite's admin.
    expect((await inPod('get', 'pods')).stderr).toContain('forbidden');
  });

  it('pulls an image pushed to the node under a ghcr.io name, as the charts name theirs', async () => {
    const layout = (
      await runProcess('bash', [join(ROOT, 'scripts/control-plane/node/images.sh')])
    ).stdout.trim();
    const image = `ghcr.io/static-export-operator/pushed:${ns}`;
    await (await realNode()).pushImage(layout, BUSYBOX, image);
    const job = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pushed', namespace: ns },
      spec: {
        ...ON_REAL_NODE,
        restartPolicy: 'Never',
        containers: [{ name: 'c', image, command: ['echo', 'pulled'] }],
      },
    };
    await kubectlOk(['apply', '-f', '-'], JSON.stringify(job));
    const phase = ['get', 'pod', 'pushed', '-n', ns, '-o', 'jsonpath={.status.phase}'];
    await eventually('the pod to succeed', async () => (await kubectlOk(phase)) === 'Succeeded');
    expect(await kubectlOk(['logs', 'pushed', '-n', ns])).toBe('pulled\n');
  });

  it('forwards a local port to the pod', async () => {
    const forward = spawn(KUBECTL, [
      '--kubeconfig',
      kubeconfig(),
      'port-forward',
      '-n',
      ns,
      'pod/web',
      ':8080',
    ]);
    try {
      const port = await new Promise<string>((resolve, reject) => {
        forward.stdout.on('data', (d: Buffer) => {
          const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(String(d));
          if (m?.[1]) resolve(m[1]);
        });
        forward.once('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}`)));
      });
      expect(await get(`http://127.0.0.1:${port}/`)).toBe(`served from ${ns}\n`);
    } finally {
      forward.kill();
    }
  });
});
