// The operator chart on the real node, as a user installs it: the image (built offline, pulled by
// the node under the chart's default name), both replicas Running and Ready, one holding the Lease,
// the API reached with the pod's in-cluster config only and nothing refused in the audit log; the
// leader's pod deleted, the standby takes over and a release created then becomes Ready.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditLogPath } from '../../../scripts/control-plane/control-plane.ts';
import { NODE_IP, ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import {
  createNamespace,
  eventually,
  installCrds,
  kubeconfig,
  kubectl,
  kubectlOk,
} from '../../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS, realNode } from '../../support/cluster/real-node.ts';
import { ADMIN_KEY_SECRET, applyRelease, applySecret, getRelease } from '../../support/cluster/resources.ts';
import { helm, helmInstall, OPERATOR_CHART_DIR } from '../../support/tools/chart.ts';

const controlPlaneDir = inject('controlPlaneDir');
const RELEASE = 'node-op';
const FULLNAME = `${RELEASE}-static-export-operator`;

interface PodList {
  items: {
    metadata: { name: string; deletionTimestamp?: string };
    spec: { nodeName?: string; containers: { args?: string[]; env?: { name: string }[] }[] };
    status: { phase?: string; conditions?: { type: string; status: string }[] };
  }[];
}

describe.runIf(controlPlaneDir)('the operator chart on the real node', () => {
  let ns: string;
  let siteNs: string;
  let sim: Simulator;

  const pods = async () =>
    (
      JSON.parse(
        await kubectlOk([
          'get',
          'pods',
          '-n',
          ns,
          '-l',
          'app.kubernetes.io/name=static-export-operator',
          '-o',
          'json',
        ]),
      ) as PodList
    ).items.filter((p) => !p.metadata.deletionTimestamp);
  const ready = (p: PodList['items'][number]) =>
    p.status.phase === 'Running' &&
    p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const holder = async () =>
    (
      JSON.parse(await kubectlOk(['get', 'lease', FULLNAME, '-n', ns, '-o', 'json'])) as {
        spec: { holderIdentity?: string };
      }
    ).spec.holderIdentity ?? '';
  const twoReady = () =>
    eventually(
      'two operator pods Running and Ready on the real node',
      async () => {
        const list = await pods();
        return list.length === 2 && list.every(ready) ? list : undefined;
      },
      180_000,
    );

  beforeAll(async () => {
    const [cp] = await Promise.all([realNode(), installCrds()]);
    const tag = await cp.pushProjectImage();
    ns = await createNamespace('node-op');
    siteNs = await createNamespace('node-op-site');
    // Where pods reach it: the node's address on its bridge (links it signs point there too).
    sim = await startSimulator({ host: NODE_IP, port: 0, exportDurationMs: 300 });
    await applySecret(siteNs, ADMIN_KEY_SECRET, { apiKey: sim.adminKey });
    const installed = await helmInstall('helm4', {
      release: RELEASE,
      chart: OPERATOR_CHART_DIR,
      namespace: ns,
      values: {
        image: { tag },
        crds: { enabled: false },
        operator: { apiBaseUrl: sim.baseUrl, allowInsecureApiBaseUrl: true },
        watchNamespaces: [siteNs],
        ...ON_REAL_NODE,
      },
    });
    expect(installed.code, installed.stderr).toBe(0);
  }, REAL_NODE_START_TIMEOUT_MS);

  afterAll(async () => {
    await helm('helm4', ['uninstall', RELEASE, '--kubeconfig', kubeconfig(), '-n', ns, '--wait']);
    await kubectl(['delete', 'namespace', ns, siteNs, '--wait=false']);
    await sim?.close();
  });

  it('runs both replicas Ready, one leading, with in-cluster config and no request refused', async () => {
    const list = await twoReady();
    expect(list.map((p) => p.spec.nodeName)).toEqual(['static-export-node', 'static-export-node']);
    // No kubeconfig anywhere in the pod: the client finds the service account's token and CA.
    for (const c of list.flatMap((p) => p.spec.containers)) {
      expect(c.args?.join(' ') ?? '').not.toContain('--kubeconfig');
      expect((c.env ?? []).map((e) => e.name)).not.toContain('KUBECONFIG');
    }
    const leader = await eventually('a Lease holder', async () => (await holder()) || undefined);
    expect(list.map((p) => p.metadata.name)).toContain(leader.split('-').slice(0, -1).join('-'));
    const audit = readFileSync(auditLogPath(controlPlaneDir as string), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { user: { username: string }; responseStatus?: { code?: number } })
      .filter((e) => e.user.username === `system:serviceaccount:${ns}:${FULLNAME}`);
    expect(audit.length).toBeGreaterThan(10);
    expect(audit.filter((e) => e.responseStatus?.code === 403)).toEqual([]);
  });

  it('passes helm test: static-export check in a pod finds the CRDs established and a replica leading', async () => {
    await twoReady();
    const tested = await helm('helm4', ['test', RELEASE, '--kubeconfig', kubeconfig(), '-n', ns, '--logs']);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/Phase:\s+Succeeded/);
    expect(tested.stdout).toMatch(/ok\s+operator: .*Lease/);
    expect(tested.stdout).toMatch(/ok\s+CRD staticexportreleases\.staticexport\.dev/);
  });

  it('fails over when the leader pod is deleted: the standby leads and publishes a new release', async () => {
    const before = await holder();
    const leaderPod = before.split('-').slice(0, -1).join('-');
    await kubectlOk(['delete', 'pod', leaderPod, '-n', ns, '--wait=false']);
    const after = await eventually(
      'another replica holds the Lease',
      async () => {
        const h = await holder();
        return h && h !== before ? h : undefined;
      },
      90_000,
    );
    expect(after.split('-').slice(0, -1).join('-')).not.toBe(leaderPod);
    await applyRelease(siteNs, 'after-failover');
    const r = await eventually(
      'the release created after the failover Ready',
      async () => {
        const x: StaticExportRelease = await getRelease(siteNs, 'after-failover');
        return x.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? x : undefined;
      },
      120_000,
    );
    expect(r.status?.current?.version).toMatch(/^sha256-/);
    await twoReady();
  });
});
