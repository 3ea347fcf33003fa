// How `npm run demo` serves the site chart it installed next to the release: on the real node
// (the chart's pods run there; the site answers through its Service's ClusterIP, from this host
// through kube-proxy), or, where no real node can run, as the pod's processes on this machine
// (kwok's pods run nothing): the init container's rendered command, then real nginx with the
// chart's rendered config, run again for each version the operator rolls out.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ON_REAL_NODE } from './control-plane/node.ts';
import {
  freePort,
  parseManifests,
  type RunningNginx,
  runInitContainer,
  type SecretData,
  startNginx,
} from './site-local.ts';

export interface DemoSite {
  /** Where the site answers. */
  readonly baseUrl: string;
  /** The pods serve the version the operator just rolled out. */
  follow(): Promise<void>;
  stop(): Promise<void>;
}

export interface DemoCluster {
  root: string;
  dir: string;
  kubectl(args: string[]): string;
  /** For waits: the simulator in this process must answer the pods meanwhile. */
  kubectlAsync(args: string[]): Promise<string>;
  helm(args: string[]): string;
  /** The chart's values both ways share: existing-Secret mode, one replica. */
  siteValues: string[];
}

const CHART = (c: DemoCluster) => join(c.root, 'charts', 'static-export-site');
const DEPLOYMENT = 'deployment/docs-static-export-site';

/** The chart installed on the real node, pulling `tag` of the project's image; served through its Service. */
export async function siteOnNode(c: DemoCluster, tag: string): Promise<DemoSite> {
  const placement = [
    '--set',
    `image.tag=${tag}`,
    '--set',
    'nginx.image.tag=offline',
    '--set-json',
    `tolerations=${JSON.stringify(ON_REAL_NODE.tolerations)}`,
    '--set-json',
    `nodeSelector=${JSON.stringify(ON_REAL_NODE.nodeSelector)}`,
  ];
  console.log(`    ${placement.join(' ')}   # the real node: this build's image, the node's taint`);
  c.helm(['install', 'docs', CHART(c), '-n', 'docs', ...c.siteValues, ...placement]);
  // Rolled out, and the old pods gone: until then the Service may still send requests to them.
  const follow = async () => {
    await c.kubectlAsync(['rollout', 'status', DEPLOYMENT, '-n', 'docs', '--timeout=300s']);
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
      const pods = JSON.parse(await c.kubectlAsync(['get', 'pods', '-n', 'docs', '-o', 'json'])) as {
        items: { metadata: { deletionTimestamp?: string }; status: { phase: string } }[];
      };
      if (pods.items.every((p) => !p.metadata.deletionTimestamp && p.status.phase === 'Running')) break;
    }
    console.log(c.kubectl(['get', 'pods', '-n', 'docs', '-o', 'wide']).trim());
  };
  const svc = JSON.parse(
    c.kubectl(['get', 'service', 'docs-static-export-site', '-n', 'docs', '-o', 'json']),
  ) as {
    spec: { clusterIP: string; ports: { port: number }[] };
  };
  const baseUrl = `http://${svc.spec.clusterIP}:${svc.spec.ports[0]?.port}`;
  return { baseUrl, follow, stop: async () => {} };
}

/** The chart installed on kwok's node, its pod run as local processes with the Secret's values. */
export async function siteAsLocalProcesses(c: DemoCluster): Promise<DemoSite> {
  c.helm(['install', 'docs', CHART(c), '-n', 'docs', ...c.siteValues]);
  const port = await freePort();
  const objects = parseManifests(
    c.helm([
      'template',
      'docs',
      CHART(c),
      '-n',
      'docs',
      ...c.siteValues,
      '--set',
      `siteMountPath=${join(c.dir, 'www')}`,
      '--set',
      `containerPort=${port}`,
    ]),
  );
  /** What the kubelet does when the pod (re)starts: the init container fills the served directory. */
  const runPod = async () => {
    const secret = JSON.parse(
      c.kubectl(['get', 'secret', 'docs-site-values', '-n', 'docs', '-o', 'json']),
    ) as {
      data: Record<string, string>;
    };
    const secrets: SecretData = {
      'docs-site-values': Object.fromEntries(
        Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      ),
    };
    const r = await runInitContainer(objects, secrets, c.dir);
    if (r.code !== 0)
      throw new Error(`the init container's static-export fetch failed (${r.code}): ${r.stderr}`);
    console.log(
      `  static-export fetch: version ${secrets['docs-site-values']?.version} into ${join(c.dir, 'www', 'site')}`,
    );
  };
  let nginx: RunningNginx | undefined;
  return {
    get baseUrl() {
      return nginx?.baseUrl ?? `http://127.0.0.1:${port}`;
    },
    follow: async () => {
      await runPod();
      nginx ??= await startNginx(objects, port, c.dir);
    },
    stop: async () => nginx?.stop(),
  };
}
