// The charts with `openshift` on the real node, their pods admitted the way OpenShift's restricted-v2
// SCC admits them (issue 32, item 7): an arbitrary uid of the namespace's range, group 0, that uid
// as fsGroup (test/support/tools/restricted-scc.ts, as a Helm post-renderer). The site chart's init
// container fetches the bundle and nginx serves it; the operator chart's replica becomes Ready and
// really runs as that uid.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import { builtImage } from '../../../scripts/image/built.ts';
import { createNamespace, eventually, kubeconfig, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS } from '../../support/cluster/real-node.ts';
import { installSite, podReady, sitePods, useSiteSuite } from '../../support/cluster/site-on-node.ts';
import { helm, helmInstall, OPERATOR_CHART_DIR } from '../../support/tools/chart.ts';
import {
  OPENSHIFT_UID,
  RESTRICTED_SCC_POST_RENDERER,
  SCC_POD_SECURITY,
} from '../../support/tools/restricted-scc.ts';

const controlPlaneDir = inject('controlPlaneDir');

interface Pod {
  metadata: { name: string };
  spec: {
    securityContext?: Record<string, unknown>;
    containers: { securityContext?: Record<string, unknown> }[];
  };
  status: { conditions?: { type: string; status: string }[] };
}

describe.runIf(controlPlaneDir)('the charts with openshift, under an arbitrary uid on the real node', () => {
  const h = useSiteSuite('node-oc');
  let operatorNs = '';

  afterAll(async () => {
    if (!operatorNs) return;
    await helm('helm3', ['uninstall', 'oc', '--kubeconfig', kubeconfig(), '-n', operatorNs, '--wait']);
    await kubectl(['delete', 'namespace', operatorNs, '--wait=false']);
  });

  it(
    'site chart: the init container fetches into the site volume and nginx serves it',
    async () => {
      const { base } = await installSite(h.ns, 'docs', {
        values: { openshift: true },
        postRenderer: RESTRICTED_SCC_POST_RENDERER,
      });
      const pods = await eventually('the rolled site pods Ready', async () => {
        const list = await sitePods(h.ns, 'docs');
        return list.length > 0 && list.every(podReady) ? list : undefined;
      });
      for (const p of pods) {
        const pod = JSON.parse(
          await kubectlOk(['get', 'pod', p.metadata.name, '-n', h.ns, '-o', 'json']),
        ) as Pod;
        expect(pod.spec.securityContext).toMatchObject(SCC_POD_SECURITY);
        // The chart sets no ids of its own to override the SCC's.
        for (const c of pod.spec.containers) expect(c.securityContext ?? {}).not.toHaveProperty('runAsUser');
        expect(await kubectlOk(['logs', p.metadata.name, '-n', h.ns, '-c', 'fetch'])).toMatch(
          /sha256-[0-9a-f]{64}/,
        );
      }
      for (const [path, title] of [
        ['/', '<title>'],
        ['/getting-started', '<title>Getting started'],
      ] as const) {
        const res = await fetch(`${base}${path}`);
        expect(res.status, path).toBe(200);
        expect(await res.text(), path).toContain(title);
      }
    },
    REAL_NODE_START_TIMEOUT_MS,
  );

  it('operator chart: the replica becomes Ready, running as the assigned uid with group 0', async () => {
    operatorNs = await createNamespace('node-oc-op');
    const { tag } = await builtImage();
    const installed = await helmInstall('helm3', {
      release: 'oc',
      chart: OPERATOR_CHART_DIR,
      namespace: operatorNs,
      extra: ['--post-renderer', RESTRICTED_SCC_POST_RENDERER],
      values: {
        openshift: true,
        image: { tag },
        replicaCount: 1,
        crds: { enabled: false },
        watchNamespaces: [operatorNs],
        ...ON_REAL_NODE,
      },
    });
    expect(installed.code, installed.stderr).toBe(0);
    const pod = await eventually(
      'the operator pod Ready',
      async () => {
        const list = JSON.parse(
          await kubectlOk([
            'get',
            'pods',
            '-n',
            operatorNs,
            '-l',
            'app.kubernetes.io/name=static-export-operator',
            '-o',
            'json',
          ]),
        ) as { items: Pod[] };
        return list.items.find((p) =>
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
      },
      180_000,
    );
    expect(pod.spec.securityContext).toMatchObject(SCC_POD_SECURITY);
    // The image has no shell; its Node says who the process is.
    const ids = await kubectlOk([
      'exec',
      pod.metadata.name,
      '-n',
      operatorNs,
      '--',
      '/nodejs/bin/node',
      '-p',
      'process.getuid() + ":" + process.getgid() + ":" + process.getgroups().join(",")',
    ]);
    expect(ids.trim()).toBe(`${OPENSHIFT_UID}:0:0,${OPENSHIFT_UID}`);
  });
});
