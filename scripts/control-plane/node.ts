// The real node beside kwok's: Debian's containerd and runc with the CNI bridge, and the kubelet and
// kube-proxy (nftables mode) built with the control plane, so pods really run. Images come from a
// local Distribution registry that containerd uses in place of the registries the charts name.
// Everything the node makes lives under <cluster dir>/node or carries its names (the bridge, the
// CNI network, kube-proxy's nftables tables), so `cleanNode` can take all of it away, after a
// crash too.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const REAL_NODE = 'static-export-node';
/** Only pods that tolerate this run on the real node: the kwok-only tests keep their fake pods. */
export const REAL_NODE_TAINT = { key: 'staticexport.dev/real-node', effect: 'NoSchedule' } as const;
/** Pod spec fields (and chart values) that put a pod on the real node. */
export const ON_REAL_NODE = {
  tolerations: [{ key: REAL_NODE_TAINT.key, operator: 'Exists', effect: REAL_NODE_TAINT.effect }],
  nodeSelector: { 'kubernetes.io/hostname': REAL_NODE },
};
/** The node's address is the bridge's: pods reach the host there (the default route leaves the machine). */
export const NODE_IP = '10.85.0.1';
const POD_CIDR = '10.85.0.0/24';
export const SERVICE_CIDR = '10.96.0.0/16';
const BRIDGE = 'se-node0';
const CNI_NETWORK = 'static-export-node';
/** Registries the charts and the kubelet name; containerd pulls their images from the local one. */
const MIRRORED_REGISTRIES = ['docker.io', 'ghcr.io', 'registry.k8s.io'] as const;
const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10.1';
const DEVICE_PLUGINS = '/var/lib/kubelet/device-plugins';
/** Host settings the kubelet and the CNI bridge plugin change; put back when the node stops. */
const SYSCTLS = ['vm/overcommit_memory', 'kernel/panic', 'kernel/panic_on_oops', 'net/ipv4/ip_forward'];

export interface NodePorts {
  kubelet: number;
  dnsReady: number;
  proxyHealthz: number;
  proxyMetrics: number;
  registry: number;
}

export function nodePaths(dir: string) {
  const root = join(dir, 'node');
  return {
    root,
    containerdConfig: join(root, 'containerd.toml'),
    containerdSocket: join(root, 'containerd.sock'),
    registryConfig: join(root, 'registry.yaml'),
    corefile: join(root, 'Corefile'),
    corednsKubeconfig: join(root, 'coredns.kubeconfig'),
    kubeletConfig: join(root, 'kubelet.yaml'),
    kubeletKubeconfig: join(root, 'kubelet.kubeconfig'),
    kubeletRoot: join(root, 'kubelet'),
    proxyConfig: join(root, 'kube-proxy.yaml'),
    proxyKubeconfig: join(root, 'kube-proxy.kubeconfig'),
    sysctls: join(root, 'sysctls.json'),
  };
}

export type NodeComponent =
  | 'registry'
  | 'containerd'
  | 'coredns'
  | 'kubelet'
  | 'kube-proxy'
  | 'apiserver-proxy';

export function nodeArgs(c: NodeComponent, dir: string, apiserverPort: number): string[] {
  const p = nodePaths(dir);
  switch (c) {
    case 'registry':
      return ['serve', p.registryConfig];
    case 'containerd':
      return ['--config', p.containerdConfig];
    case 'coredns':
      return ['-conf', p.corefile];
    case 'kubelet':
      return [
        `--config=${p.kubeletConfig}`,
        `--kubeconfig=${p.kubeletKubeconfig}`,
        `--root-dir=${p.kubeletRoot}`,
        `--cert-dir=${join(p.kubeletRoot, 'pki')}`,
        `--hostname-override=${REAL_NODE}`,
        `--node-ip=${NODE_IP}`,
        '--v=1',
      ];
    case 'kube-proxy':
      return [`--config=${p.proxyConfig}`, '--v=1'];
    case 'apiserver-proxy':
      return [
        join(import.meta.dirname, 'node', 'forward.ts'),
        `${NODE_IP}:${apiserverPort}`,
        `127.0.0.1:${apiserverPort}`,
      ];
  }
}

/**
 * The `kubernetes` Service's endpoint while the node runs: the API server's port on the node's
 * address (apiserver-proxy). The API server keeps none itself (it advertises loopback, with
 * --endpoint-reconciler-type=none); kube-proxy sends in-cluster clients of 10.96.0.1 here.
 */
export function kubernetesEndpointSlice(apiserverPort: number) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'kubernetes',
      namespace: 'default',
      labels: {
        'kubernetes.io/service-name': 'kubernetes',
        'endpointslice.kubernetes.io/managed-by': 'real-node.staticexport.dev',
      },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [NODE_IP], conditions: { ready: true } }],
    ports: [{ name: 'https', port: apiserverPort, protocol: 'TCP' }],
  };
}

const run = promisify(execFile);

/**
 * Fails when another real node runs on this machine, or one that is gone left its bridge (they would
 * share the bridge and the pod network), saying how to remove it: `cluster:down` on its cluster dir
 * when a process or mount still names it, else the commands for what the node made on the host.
 */
export async function assertNoOtherNode(): Promise<void> {
  const { stdout } = await run('ip', ['-o', 'link', 'show']);
  if (!stdout.includes(`: ${BRIDGE}:`)) return;
  const ps = await run('ps', ['-ww', '-eo', 'args=']);
  const dir = nodeDirIn(ps.stdout.split('\n'), mountPoints());
  if (dir)
    throw new Error(
      `a real node (running, or gone with what it left) is in ${dir}; remove it with STATIC_EXPORT_CLUSTER_DIR=${dir} npm run cluster:down`,
    );
  const [veths, tables] = await Promise.all([
    run('ip', ['-o', 'link', 'show', 'master', BRIDGE]).catch(() => ({ stdout: '' })),
    run('nft', ['list', 'tables']).catch(() => ({ stdout: '' })),
  ]);
  throw new Error(
    `a real node that is gone left its ${BRIDGE} bridge; remove what it left with: ${removalCommands(veths.stdout, tables.stdout).join('; ')}`,
  );
}

/**
 * The cluster dir of a real node named by a process's command line (a config file of its node
 * directory) or a mount point (its containers' and pods' mounts), if any.
 */
export function nodeDirIn(commandLines: string[], mountPoints: string[]): string | undefined {
  for (const line of commandLines) {
    const m =
      /(\/\S*)\/node\/(?:containerd\.toml|kubelet\.yaml|kube-proxy\.yaml|registry\.yaml|Corefile)\b/.exec(
        line,
      );
    if (m) return m[1];
  }
  for (const point of mountPoints) {
    const m = /^(\/.*)\/node\/(?:containerd-state|containerd|kubelet)\//.exec(point);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Commands removing what a node whose directory is gone left on the host: the veths on its bridge
 * (`ip -o link show master BRIDGE`), the bridge, and kube-proxy's tables (`nft list tables`).
 */
export function removalCommands(veths: string, tables: string): string[] {
  return [
    ...[...veths.matchAll(/^\d+: ([^:@]+)/gm)].map((m) => `ip link del ${m[1]}`),
    `ip link del ${BRIDGE}`,
    ...tables
      .split('\n')
      .map((t) => t.trim())
      .filter((t) => /^table \S+ kube-proxy$/.test(t))
      .map((t) => `nft delete ${t}`),
  ];
}

/**
 * Why a real node cannot run on this machine, or undefined when it can (its binaries may still
 * have to be built: minutes, once).
 */
export async function nodeUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'a real node needs Linux';
  if (process.getuid?.() !== 0) return 'a real node needs root (containerd, the CNI bridge, nftables)';
  const tools = ['containerd', 'runc', 'nft', 'iptables', 'gcc', 'go'];
  const found = await Promise.all(
    tools.map((t) =>
      run('sh', ['-c', `command -v ${t}`]).then(
        () => true,
        () => false,
      ),
    ),
  );
  const missing = tools.filter((_, i) => !found[i]);
  if (!existsSync('/usr/lib/cni/bridge')) missing.push('the CNI plugins');
  if (missing.length > 0)
    return `${missing.join(', ')} not installed (Debian: apt-get install containerd runc containernetworking-plugins nftables iptables gcc golang-go)`;
  return assertNoOtherNode().then(
    () => undefined,
    (e: Error) => e.message,
  );
}

/** Config files of containerd, the CNI, the registry, CoreDNS, the kubelet and kube-proxy. */
export function writeNodeFiles(
  dir: string,
  ports: NodePorts,
  kubeconfigFor: (cert: string, key: string) => string,
  certs: {
    caCert: string;
    adminCert: string;
    adminKey: string;
    nodeCert: string;
    nodeKey: string;
    proxyCert: string;
    proxyKey: string;
  },
): void {
  const p = nodePaths(dir);
  const cniConf = join(p.root, 'cni', 'net.d');
  const hostsDir = join(p.root, 'certs.d');
  for (const d of [cniConf, p.kubeletRoot]) mkdirSync(d, { recursive: true });
  writeFileSync(
    p.containerdConfig,
    `version = 2
root = "${join(p.root, 'containerd')}"
state = "${join(p.root, 'containerd-state')}"
[grpc]
  address = "${p.containerdSocket}"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(p.root, 'opt')}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # Root here lacks CAP_SYS_RESOURCE: the sandbox's oom_score_adj of -998 would fail runc.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniConf}"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      Root = "${join(p.root, 'runc')}"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${hostsDir}"
`,
  );
  // The local registry stands in for each upstream, as its mirror and as its server (so nothing falls
  // back to the upstream: traffic stays here); images live in it under <upstream host>/<repository>.
  // containerd 1.6 ignores a hosts.toml without a [host] table (and pulls from the upstream).
  for (const host of MIRRORED_REGISTRIES) {
    const url = `http://127.0.0.1:${ports.registry}/v2/${host}`;
    mkdirSync(join(hostsDir, host), { recursive: true });
    writeFileSync(
      join(hostsDir, host, 'hosts.toml'),
      `server = "${url}"\noverride_path = true\n[host."${url}"]\n  capabilities = ["pull", "resolve"]\n  override_path = true\n`,
    );
  }
  // No default route in pods: only the pod network, the node and Services are reachable.
  writeFileSync(
    join(cniConf, '10-static-export-node.conflist'),
    JSON.stringify({
      cniVersion: '0.4.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_CIDR, gateway: NODE_IP }]],
            routes: [{ dst: SERVICE_CIDR }],
            dataDir: join(p.root, 'cni', 'networks'),
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    }),
  );
  writeFileSync(
    p.registryConfig,
    `version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: ${join(p.root, 'registry')}}}
http: {addr: 127.0.0.1:${ports.registry}, secret: real-node-registry}
`,
  );
  // Cluster DNS on the node's address, answering for the cluster's names only: with no `forward`,
  // other names are refused rather than looked up off the machine. It reads the API as admin (the
  // API server's default RBAC has no role for it).
  writeFileSync(p.corednsKubeconfig, kubeconfigFor(certs.adminCert, certs.adminKey));
  writeFileSync(
    p.corefile,
    `.:53 {
  bind ${NODE_IP}
  errors
  ready 127.0.0.1:${ports.dnsReady}
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig ${p.corednsKubeconfig}
    fallthrough in-addr.arpa ip6.arpa
  }
}
`,
  );
  writeFileSync(p.kubeletKubeconfig, kubeconfigFor(certs.nodeCert, certs.nodeKey));
  writeFileSync(
    p.kubeletConfig,
    `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: ${ports.kubelet}
readOnlyPort: 0
healthzPort: 0
containerRuntimeEndpoint: unix://${p.containerdSocket}
podLogsDir: ${join(p.root, 'pod-logs')}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${certs.caCert}}
authorization: {mode: Webhook}
# cgroup v1 without systemd here: cgroupfs, and no QoS or allocatable cgroups of the kubelet's own.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
clusterDNS: [${NODE_IP}]
clusterDomain: cluster.local
registerWithTaints: [{key: ${REAL_NODE_TAINT.key}, effect: ${REAL_NODE_TAINT.effect}}]
# A shared test machine's disk may be fuller than a node's would be: never evict or collect images.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`,
  );
  writeFileSync(p.proxyKubeconfig, kubeconfigFor(certs.proxyCert, certs.proxyKey));
  writeFileSync(
    p.proxyConfig,
    `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: ${p.proxyKubeconfig}}
hostnameOverride: ${REAL_NODE}
clusterCIDR: ${POD_CIDR}
nodePortAddresses: ["${NODE_IP}/32"]
healthzBindAddress: 127.0.0.1:${ports.proxyHealthz}
metricsBindAddress: 127.0.0.1:${ports.proxyMetrics}
# Leave the host's conntrack settings as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
`,
  );
}

/**
 * Notes the host settings the node will change, then makes the bridge with the node's address
 * before the kubelet starts (it refuses a node IP no interface has), and a route that keeps Service
 * traffic on it even before kube-proxy's rules exist.
 */
export async function prepareHost(dir: string): Promise<void> {
  const p = nodePaths(dir);
  const saved = Object.fromEntries(SYSCTLS.map((k) => [k, readFileSync(`/proc/sys/${k}`, 'utf8').trim()]));
  writeFileSync(p.sysctls, JSON.stringify(saved));
  await run('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  await run('ip', ['addr', 'add', `${NODE_IP}/24`, 'dev', BRIDGE]);
  await run('ip', ['link', 'set', BRIDGE, 'up']);
  await run('ip', ['route', 'add', SERVICE_CIDR, 'dev', BRIDGE, 'src', NODE_IP]);
}

const quiet = (cmd: string, args: string[]) => run(cmd, args).catch(() => undefined);

/**
 * Ends the shims of this node's containerd that outlived it (after it crashed nobody tells them to
 * exit) and removes their sockets, which containerd 1.6 keeps in the fixed /run/containerd/s, named
 * by a hash of its address, the namespace and the id.
 */
export async function killShims(dir: string): Promise<void> {
  const address = nodePaths(dir).containerdSocket;
  const { stdout } = await run('ps', ['-ww', '-eo', 'pid=,args=']);
  for (const m of stdout.matchAll(
    /^\s*(\d+) \S*containerd-shim\S* -namespace (\S+) -id (\S+) -address (\S+)/gm,
  )) {
    const [, pid, namespace, id, shimAddress] = m;
    if (shimAddress !== address || !namespace || !id) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* already gone */
    }
    const hash = createHash('sha256')
      .update(join(address, namespace, id))
      .digest('hex');
    rmSync(join('/run/containerd/s', hash), { force: true });
  }
}

/**
 * Removes what the node left on the host once its processes are gone: containers, mounts under its
 * directory, the bridge and any veth on it, kube-proxy's nftables tables, the kubelet's iptables
 * chains, the CNI result cache, log links, and the host settings the node changed. Safe to run twice.
 */
export async function cleanNode(dir: string): Promise<void> {
  const p = nodePaths(dir);
  // Containers outlive their killed shim (after containerd crashed, the CRI could not stop them):
  // runc ends them from its state under the node dir, and removes their cgroups.
  const runc = join(p.root, 'runc', 'k8s.io');
  if (existsSync(runc))
    for (const id of readdirSync(runc)) await quiet('runc', ['--root', runc, 'delete', '--force', id]);
  for (const mount of mountsUnder(p.root).reverse()) await quiet('umount', ['-l', mount]);
  const { stdout } = await run('ip', ['-o', 'link', 'show', 'master', BRIDGE]).catch(() => ({ stdout: '' }));
  for (const m of stdout.matchAll(/^\d+: ([^:@]+)/gm)) await quiet('ip', ['link', 'del', m[1] ?? '']);
  await quiet('ip', ['link', 'del', BRIDGE]);
  for (const family of ['ip', 'ip6']) await quiet('nft', ['delete', 'table', family, 'kube-proxy']);
  for (const [iptables, family] of [
    ['iptables', 'ip'],
    ['ip6tables', 'ip6'],
  ] as const)
    for (const table of ['mangle', 'nat', 'filter']) {
      await quiet(iptables, ['-t', table, '-X', 'KUBE-KUBELET-CANARY']);
      if (table === 'filter') {
        // The kubelet's guard against martian packets to 127.0.0.0/8 (route_localnet).
        for (const chain of ['INPUT', 'OUTPUT']) await quiet(iptables, ['-D', chain, '-j', 'KUBE-FIREWALL']);
        await quiet(iptables, ['-F', 'KUBE-FIREWALL']);
        await quiet(iptables, ['-X', 'KUBE-FIREWALL']);
      }
      // The kubelet made the table (iptables-nft); an empty one goes, one holding rules stays.
      const listed = await run('nft', ['-j', 'list', 'table', family, table]).catch(() => undefined);
      if (listed && !listed.stdout.includes('"rule"')) await quiet('nft', ['delete', 'table', family, table]);
    }
  for (const f of podFilesOnHost(p.root)) rmSync(f, { force: true });
  for (const d of sharedDirs()) removeIfEmpty(d);
  if (existsSync(p.sysctls))
    for (const [k, v] of Object.entries(
      JSON.parse(readFileSync(p.sysctls, 'utf8')) as Record<string, string>,
    ))
      writeFileSync(`/proc/sys/${k}`, v);
}

/**
 * Files the node leaves in places shared with the host: CNI results naming its sandboxes (left when
 * containerd could not tear a pod down), the kubelet's log links, and the device plugin socket the
 * kubelet makes in /var/lib/kubelet whatever its root dir.
 */
function podFilesOnHost(root: string): string[] {
  const list = (d: string) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : []);
  return [
    ...list('/var/lib/cni/results').filter((f) => readFileSync(f, 'utf8').includes(`"${root}/`)),
    ...list('/var/log/containers').filter((f) => readLink(f)?.startsWith(`${root}/`)),
    ...list(DEVICE_PLUGINS).filter((f) => f.endsWith('/kubelet.sock')),
  ];
}

/** The pods' parent cgroups: containerd's default, as the kubelet makes no cgroups of its own here. */
function podCgroups(): string[] {
  const cgroups = '/sys/fs/cgroup';
  if (existsSync(join(cgroups, 'cgroup.controllers'))) return [join(cgroups, 'k8s.io')];
  return readdirSync(cgroups).map((c) => join(cgroups, c, 'k8s.io'));
}

/**
 * Directories the node's programs make in places shared with the host (containerd's shim sockets,
 * the kubelet's log links and device plugins, the CNI cache) and the pods' cgroups. Each goes only when empty: others
 * may use them.
 */
function sharedDirs(): string[] {
  return [
    '/run/containerd/s',
    '/run/containerd',
    '/var/log/containers',
    '/var/lib/cni/results',
    '/var/lib/cni',
    DEVICE_PLUGINS,
    '/var/lib/kubelet',
    ...podCgroups(),
  ];
}

function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    /* absent, or in use */
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** The host's mount points, in mount order (mountinfo escapes spaces as \040). */
function mountPoints(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\040/g, ' '));
}

/** Mount points at or below `root`, in mount order. */
export function mountsUnder(root: string): string[] {
  return mountPoints().filter((m) => m === root || m.startsWith(`${root}/`));
}

/** What of the node is still on the host: for tests asserting a stopped node left nothing. */
export async function nodeLeftovers(dir: string): Promise<string[]> {
  const left = mountsUnder(nodePaths(dir).root).map((m) => `mount ${m}`);
  const links = await run('ip', ['-o', 'link', 'show']);
  for (const m of links.stdout.matchAll(/^\d+: ([^:@]+)[^\n]*/gm))
    if (m[1] === BRIDGE || m[0].includes(`master ${BRIDGE}`)) left.push(`link ${m[1]}`);
  const tables = await run('nft', ['list', 'tables']);
  for (const t of tables.stdout.split('\n')) if (t.includes('kube-proxy')) left.push(`nftables ${t.trim()}`);
  for (const save of ['iptables-save', 'ip6tables-save']) {
    const rules = await run(save, []);
    for (const r of rules.stdout.split('\n')) if (r.includes('KUBE-')) left.push(`${save}: ${r}`);
  }
  for (const f of podFilesOnHost(nodePaths(dir).root)) left.push(`file ${f}`);
  for (const d of podCgroups()) if (existsSync(d)) left.push(`cgroup ${d}`);
  return left;
}
