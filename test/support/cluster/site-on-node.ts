// The site chart on the real node beside a release, which the node's site tests share: the operator
// suite with the simulator where pods reach it (the node's bridge address, which the links it signs
// name) and the static-export image on the node; then a release Ready and the chart installed in
// existing-Secret mode, rolled by the operator to the release's version, and its Service's address.

import { NODE_IP, ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import { builtImage } from '../../../scripts/image/built.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import type { SimulatorOptions } from '../../../src/simulator/index.ts';
import { CHART_DIR, helmInstall, merge } from '../tools/chart.ts';
import { eventually, kubectl, kubectlOk } from './kube.ts';
import { type OperatorSuite, useOperatorSuite } from './operator-suite.ts';
import { realNode, statusOf } from './real-node.ts';
import { applyRelease, getRelease } from './resources.ts';

export function useSiteSuite(
  namespace: string,
  sim: Omit<SimulatorOptions, 'host' | 'port'> = {},
): OperatorSuite {
  return useOperatorSuite({
    namespaces: [namespace],
    sim: { host: NODE_IP, port: 0, exportDurationMs: 300, ...sim },
    operator: { allowInsecureApiBaseUrl: true },
    editableDocs: true,
    beforeStart: async () => {
      await (await realNode()).pushProjectImage();
    },
  });
}

export interface InstalledSite {
  /** `deployment.apps/NAME`, as kubectl names it. */
  deployment: string;
  /** The Service's ClusterIP address, `http://IP:PORT`. */
  base: string;
}

/**
 * The release `name` Ready, then the site chart (helm release `name` too) serving it from the node;
 * with `postRenderer` through Helm 3 (Helm 4 takes post-renderers as plugins only).
 */
export async function installSite(
  ns: string,
  name: string,
  o: { spec?: Record<string, unknown>; values?: Record<string, unknown>; postRenderer?: string } = {},
): Promise<InstalledSite> {
  await applyRelease(ns, name, o.spec);
  await eventually(`${name} Ready`, async () => {
    const r: StaticExportRelease = await getRelease(ns, name);
    return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? r : undefined;
  });
  const { tag } = await builtImage();
  const installed = await helmInstall(o.postRenderer ? 'helm3' : 'helm4', {
    release: name,
    chart: CHART_DIR,
    namespace: ns,
    extra: ['--wait', '--timeout', '180s', ...(o.postRenderer ? ['--post-renderer', o.postRenderer] : [])],
    values: merge(
      {
        staticExport: { enabled: true, existingSecret: `${name}-values` },
        image: { tag },
        nginx: { image: { tag: 'offline' } },
        ...ON_REAL_NODE,
      },
      o.values ?? {},
    ),
  });
  if (installed.code !== 0) throw new Error(`helm install ${name} failed: ${installed.stderr}`);
  const selector = `app.kubernetes.io/instance=${name}`;
  const deployment = (await kubectlOk(['get', 'deploy', '-n', ns, '-l', selector, '-o', 'name'])).trim();
  // The operator rolls the chart's Deployment to the release's version as soon as it sees it.
  await kubectlOk(['rollout', 'status', deployment, '-n', ns, '--timeout=180s']);
  const service = JSON.parse(await kubectlOk(['get', 'service', '-n', ns, '-l', selector, '-o', 'json'])) as {
    items: { spec: { clusterIP: string; ports: { port: number }[] } }[];
  };
  const svc = service.items[0]?.spec;
  const base = `http://${svc?.clusterIP}:${svc?.ports[0]?.port}`;
  // A new Service answers once kube-proxy has programmed it.
  await eventually('the Service answers', async () =>
    (await statusOf(`${base}/`)) === 200 ? true : undefined,
  );
  return { deployment, base };
}

export interface SitePod {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName: string };
  status: {
    conditions?: { type: string; status: string }[];
    initContainerStatuses?: { name: string; restartCount: number; state: Record<string, unknown> }[];
  };
}

/** The site's pods not being deleted. */
export async function sitePods(ns: string, name: string): Promise<SitePod[]> {
  const list = JSON.parse(
    await kubectlOk(['get', 'pods', '-n', ns, '-l', `app.kubernetes.io/instance=${name}`, '-o', 'json']),
  ) as { items: SitePod[] };
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

export const podReady = (p: SitePod) =>
  p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** What the pod's fetch container printed: its last run's when it has already been restarted. */
async function fetchLog(ns: string, pod: SitePod): Promise<string> {
  const restarted =
    (pod.status.initContainerStatuses?.find((c) => c.name === 'fetch')?.restartCount ?? 0) > 0;
  const log = await kubectl([
    'logs',
    pod.metadata.name,
    '-n',
    ns,
    '-c',
    'fetch',
    ...(restarted ? ['--previous'] : []),
  ]);
  return log.stdout;
}

/** A pod of the site `name`, not Ready, whose fetch printed `pattern`, with what it printed. */
export async function refusedPod(
  ns: string,
  name: string,
  pattern: RegExp,
): Promise<{ pod: SitePod; log: string } | undefined> {
  for (const pod of await sitePods(ns, name)) {
    if (podReady(pod)) continue;
    const log = await fetchLog(ns, pod);
    if (pattern.test(log)) return { pod, log };
  }
  return undefined;
}
