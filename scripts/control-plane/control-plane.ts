// A real Kubernetes control plane on loopback for tests and the demo: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok (fake nodes that make pods Ready); on request a
// real node beside kwok's (node.ts) where pods run.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { builtImage } from '../image/built.ts';
import { runProcess } from '../run-process.ts';
import { type ClusterCerts, certPaths, createCerts } from './certs.ts';
import { kubeVersions, TEST_KUBE_VERSION_ENV } from './kube-versions.ts';
import {
  assertNoOtherNode,
  cleanNode,
  killShims,
  kubernetesEndpointSlice,
  NODE_IP,
  type NodeComponent,
  type NodePorts,
  nodeArgs,
  nodePaths,
  prepareHost,
  REAL_NODE,
  SERVICE_CIDR,
  writeNodeFiles,
} from './node.ts';

const here = import.meta.dirname;
export const COMPONENTS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;
export type Component = (typeof COMPONENTS)[number] | NodeComponent;
export const FAKE_NODE = 'kwok-node-0';
const FAKE_NODE_RESOURCES = { cpu: '1k', memory: '1Ti', pods: '1M', 'ephemeral-storage': '1Ti' };
/** The static-export image's repository, as both charts name it by default. */
export const PROJECT_IMAGE = 'ghcr.io/static-export-operator/static-export';

interface State {
  binDir: string;
  /** The Kubernetes version of binDir's control plane (absent in a state.json of an earlier version: the default). */
  kubeVersion?: string;
  ports: { etcd: number; etcdPeer: number; apiserver: number };
  pids: Partial<Record<Component, number>>;
  /** Set while the real node runs. */
  node?: { ports: NodePorts; registryBin: string; imagesDir: string };
}

/** Runs a script of this directory and returns the last line it printed (a path). */
async function scriptOutput(script: string, ...args: string[]): Promise<string> {
  const out = await promisify(execFile)('bash', [join(here, script), ...args], { maxBuffer: 1 << 20 });
  return out.stdout.trim().split('\n').at(-1) ?? '';
}

/**
 * Builds (once, cached by version) the control-plane binaries, and the real node's if asked, at
 * `kubeVersion` (default: versions.env's KUBERNETES_VERSION); returns their directory.
 */
export function buildBinaries(node = false, kubeVersion?: string): Promise<string> {
  return scriptOutput(
    'build.sh',
    ...(node ? ['node'] : []),
    ...(kubeVersion ? ['--kubernetes', kubeVersion] : []),
  );
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/**
 * The API server's audit log: requests made by service accounts only (the operator chart's RBAC
 * test reads what its account was allowed and refused); requests with the admin credentials of
 * tests and components are not logged.
 */
export const auditLogPath = (dir: string) => join(dir, 'logs', 'audit.log');
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ControlPlane {
  readonly dir: string;
  readonly kubeconfig: string;
  private readonly certs: ClusterCerts;
  private readonly state: State;
  private readonly children = new Map<Component, ChildProcess>();

  private constructor(dir: string, state: State) {
    this.dir = dir;
    this.state = state;
    this.kubeconfig = join(dir, 'kubeconfig');
    this.certs = certPaths(dir);
  }

  /** Whether the real node runs (started by this process or, for an attached one, by another). */
  get hasNode(): boolean {
    return this.state.node !== undefined;
  }

  get server(): string {
    return `https://127.0.0.1:${this.state.ports.apiserver}`;
  }

  /** Where the binaries are (the node's crictl among them). */
  get binDir(): string {
    return this.state.binDir;
  }

  /**
   * Starts a fresh control plane whose files live in `dir` (created; removed by `stop`), at
   * `kubeVersion` (default: versions.env's KUBERNETES_VERSION).
   */
  static async start(dir: string, kubeVersion?: string): Promise<ControlPlane> {
    mkdirSync(join(dir, 'logs'), { recursive: true });
    const bins = await buildBinaries(false, kubeVersion);
    createCerts(dir, REAL_NODE);
    writeFileSync(join(dir, 'audit-policy.yaml'), AUDIT_POLICY);
    const state: State = {
      binDir: bins,
      kubeVersion: kubeVersion ?? kubeVersions().current,
      ports: { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort() },
      pids: {},
    };
    const cp = new ControlPlane(dir, state);
    writeFileSync(cp.kubeconfig, cp.kubeconfigFor(cp.certs.adminCert, cp.certs.adminKey));
    try {
      for (const c of COMPONENTS) await cp.startComponent(c);
      await cp.ensureFakeNode();
    } catch (e) {
      await cp.stop();
      throw e;
    }
    return cp;
  }

  /** Re-attaches to a control plane started by another process (`npm run cluster:up`). */
  static attach(dir: string): ControlPlane {
    const file = join(dir, 'state.json');
    if (!existsSync(file)) throw new Error(`no control plane state in ${dir}`);
    return new ControlPlane(dir, JSON.parse(readFileSync(file, 'utf8')) as State);
  }

  /** The components whose recorded process still runs (see `runs`), with their pids. */
  async running(): Promise<{ component: Component; pid: number }[]> {
    const found = [];
    for (const [component, pid] of Object.entries(this.savedState().pids) as [Component, number][])
      if (await this.runs(component, pid)) found.push({ component, pid });
    return found;
  }

  /**
   * Whether `pid` is component `c` of this control plane. After a reboot or a crash a recorded pid
   * may be gone or reused by an unrelated program, whose process group must not be signalled. Each
   * component names a file of this directory on its command line, but the forwarder, which names
   * the API server's address.
   */
  private async runs(c: Component, pid: number): Promise<boolean> {
    const r = await runProcess('ps', ['-ww', '-o', 'args=', '-p', String(pid)]);
    if (r.code !== 0) return false;
    return c === 'apiserver-proxy'
      ? r.stdout.includes('forward.ts') && r.stdout.includes(`127.0.0.1:${this.state.ports.apiserver}`)
      : r.stdout.includes(`${this.dir}/`);
  }

  /** The pids recorded for `c` (by this process, or in state.json by another) that still run it. */
  private async ownPids(c: Component, saved: State['pids']): Promise<number[]> {
    const pids = [...new Set([this.state.pids[c], saved[c]])].filter((p): p is number => p !== undefined);
    const own = await Promise.all(pids.map((p) => this.runs(c, p)));
    return pids.filter((_, i) => own[i]);
  }

  private savedState(): State {
    const file = join(this.dir, 'state.json');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as State) : this.state;
  }

  private args(c: Component): string[] {
    const { ports } = this.state;
    const k = this.certs;
    const data = join(this.dir, 'etcd-data');
    switch (c) {
      case 'etcd':
        return [
          '--name=default',
          `--data-dir=${data}`,
          `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
          `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
          `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-cluster=default=http://127.0.0.1:${ports.etcdPeer}`,
          // Disposable data: skip fsync so the API server is fast on a small machine.
          '--unsafe-no-fsync',
          '--log-level=warn',
        ];
      case 'kube-apiserver':
        return [
          `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${ports.apiserver}`,
          // No default route on these machines: advertise loopback and do not reconcile endpoints.
          '--advertise-address=127.0.0.1',
          '--endpoint-reconciler-type=none',
          `--tls-cert-file=${k.serverCert}`,
          `--tls-private-key-file=${k.serverKey}`,
          `--client-ca-file=${k.caCert}`,
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${k.serviceAccountPub}`,
          `--service-account-signing-key-file=${k.serviceAccountKey}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--authorization-mode=Node,RBAC',
          // Setting blockOwnerDeletion needs update on the owner's finalizers, as on OpenShift.
          '--enable-admission-plugins=OwnerReferencesPermissionEnforcement,NodeRestriction',
          // logs, exec and port-forward reach the real node's kubelet at its InternalIP, as admin.
          `--kubelet-client-certificate=${k.adminCert}`,
          `--kubelet-client-key=${k.adminKey}`,
          '--kubelet-preferred-address-types=InternalIP',
          `--audit-policy-file=${join(this.dir, 'audit-policy.yaml')}`,
          `--audit-log-path=${auditLogPath(this.dir)}`,
          '--audit-log-format=json',
          '--profiling=false',
        ];
      case 'kube-controller-manager':
        return [
          `--kubeconfig=${this.kubeconfig}`,
          '--leader-elect=false',
          '--secure-port=0',
          `--service-account-private-key-file=${k.serviceAccountKey}`,
          `--root-ca-file=${k.caCert}`,
          '--use-service-account-credentials=false',
          '--controllers=*,-nodeipam',
        ];
      case 'kube-scheduler':
        return [`--kubeconfig=${this.kubeconfig}`, '--leader-elect=false', '--secure-port=0'];
      case 'kwok':
        return [
          `--kubeconfig=${this.kubeconfig}`,
          '--manage-all-nodes=false',
          '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
          `--config=${join(this.state.binDir, 'kwok-stages.yaml')}`,
          '--cidr=10.244.0.1/16',
          '--node-ip=10.244.0.1',
          '--node-lease-duration-seconds=40',
        ];
      default:
        return nodeArgs(c, this.dir, ports.apiserver);
    }
  }

  private binary(c: Component): string {
    if (c === 'containerd') return 'containerd';
    if (c === 'apiserver-proxy') return process.execPath;
    if (c === 'registry') return this.state.node?.registryBin ?? 'registry';
    return join(this.state.binDir, c);
  }

  async startComponent(c: Component): Promise<void> {
    const log = openSync(join(this.dir, 'logs', `${c}.log`), 'a');
    // Own process group, so `cluster:down` and `stop` can end the whole tree.
    const child = spawn(this.binary(c), this.args(c), {
      detached: true,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child.unref();
    this.children.set(c, child);
    this.state.pids[c] = child.pid;
    this.saveState();
    await this.waitHealthy(c, child);
  }

  /**
   * Starts the API server again after a test stopped it. The controller-manager and scheduler are
   * restarted too: after an outage their watch backoff (client-go, up to 30 s per informer) delays
   * ReplicaSets and scheduling by a minute, which would slow every test that runs later. Then it
   * waits for kwok to report the node Ready again.
   */
  async startApiServerAgain(): Promise<void> {
    await this.startComponent('kube-apiserver');
    for (const c of ['kube-controller-manager', 'kube-scheduler'] as const) {
      if (this.state.pids[c]) await this.restartComponent(c);
    }
    if (this.state.pids.kwok) await this.ensureFakeNode();
  }

  async stopComponent(c: Component, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const pid = this.state.pids[c];
    if (!pid) return;
    await killGroup(pid, signal);
    delete this.state.pids[c];
    this.children.delete(c);
    this.saveState();
  }

  async restartComponent(c: Component): Promise<void> {
    await this.stopComponent(c);
    if (c === 'kube-apiserver') await this.startApiServerAgain();
    else await this.startComponent(c);
  }

  /**
   * Stops every component, including those another process restarted (a test worker attached to
   * this control plane): their pids are only in state.json.
   */
  async stop(): Promise<void> {
    if (existsSync(nodePaths(this.dir).root)) await this.stopNode();
    const saved = this.savedState().pids;
    for (const c of [...COMPONENTS].reverse()) {
      for (const pid of await this.ownPids(c, saved)) await killGroup(pid, 'SIGTERM');
      delete this.state.pids[c];
      this.children.delete(c);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Starts the real node: builds its binaries and images when missing (minutes, once), then the
   * registry holding the images, containerd, CoreDNS, the kubelet (waits for the Node to be Ready),
   * kube-proxy, and the API server's forwarder on the node's address with the `kubernetes`
   * Service's EndpointSlice pointing there (in-cluster clients). Its pods need to tolerate
   * REAL_NODE_TAINT.
   */
  async startNode(): Promise<void> {
    if (this.state.node) throw new Error('the real node already runs');
    // The node's kubelet configuration is written for that version, and a kubelet newer than its
    // API server is outside Kubernetes' version skew policy.
    const { current } = kubeVersions();
    const version = this.state.kubeVersion ?? current;
    if (version !== current)
      throw new Error(
        `the real node runs only beside a ${current} control plane, and this one is ${version}: ` +
          `unset ${TEST_KUBE_VERSION_ENV} for the tests that run pods`,
      );
    await assertNoOtherNode();
    const [binDir, registryBin, imagesDir] = await Promise.all([
      buildBinaries(true),
      scriptOutput('../go-tools/build.sh', 'registry'),
      scriptOutput('node/images.sh'),
    ]);
    this.state.binDir = binDir;
    const ports = {
      kubelet: await freePort(),
      dnsReady: await freePort(),
      proxyHealthz: await freePort(),
      proxyMetrics: await freePort(),
      registry: await freePort(),
    };
    this.state.node = { ports, registryBin, imagesDir };
    this.saveState();
    try {
      writeNodeFiles(this.dir, ports, (cert, key) => this.kubeconfigFor(cert, key), this.certs);
      await prepareHost(this.dir);
      for (const c of ['registry', 'containerd', 'coredns'] as const) await this.startComponent(c);
      await this.pushNodeImages();
      await this.startComponent('kubelet');
      await this.waitNodeReady();
      await this.startComponent('kube-proxy');
      await this.startComponent('apiserver-proxy');
      const slice = kubernetesEndpointSlice(this.state.ports.apiserver);
      const r = await this.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', 'POST', slice);
      if (r.status !== 201)
        throw new Error(`creating the kubernetes EndpointSlice failed: ${r.status} ${r.body}`);
    } catch (e) {
      await this.stopNode();
      throw e;
    }
  }

  /** Pushes the node's own images (pause, busybox) to its registry under their upstream names. */
  private async pushNodeImages(): Promise<void> {
    const imagesDir = this.state.node?.imagesDir ?? '';
    const index = JSON.parse(readFileSync(join(imagesDir, 'index.json'), 'utf8')) as {
      manifests: { annotations: Record<string, string> }[];
    };
    for (const m of index.manifests) {
      const name = m.annotations['org.opencontainers.image.ref.name'] ?? '';
      await this.pushImage(imagesDir, name, name);
    }
  }

  /**
   * Makes the project's image (`npm run image`, built when its sources changed) pullable on the real
   * node under the charts' default name; returns its tag.
   */
  async pushProjectImage(): Promise<string> {
    const image = await builtImage();
    await this.pushImage(image.layout, image.tag, `${PROJECT_IMAGE}:${image.tag}`);
    return image.tag;
  }

  /**
   * Makes an image of an OCI layout (its tag `tag`) pullable on the real node as `name`, e.g.
   * ghcr.io/static-export-operator/static-export:0.1.0 (docker.io, ghcr.io and registry.k8s.io
   * names are served from the node's registry).
   */
  async pushImage(layout: string, tag: string, name: string): Promise<void> {
    const registry = this.state.node?.ports.registry;
    if (!registry) throw new Error('the real node does not run');
    const r = await runProcess('skopeo', [
      'copy',
      '--quiet',
      '--dest-tls-verify=false',
      `oci:${layout}:${tag}`,
      `docker://127.0.0.1:${registry}/${name}`,
    ]);
    if (r.code !== 0) throw new Error(`pushing ${name} to the node's registry failed: ${r.stderr}`);
  }

  private async waitNodeReady(): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const r = await this.get(`/api/v1/nodes/${REAL_NODE}`).catch(() => undefined);
      const conditions =
        r?.status === 200 ? (JSON.parse(r.body) as NodeObject).status?.conditions : undefined;
      if (conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
      const kubelet = this.state.pids.kubelet;
      if (!kubelet || !alive(kubelet)) break;
      await sleep(500);
    }
    throw new Error(`the real node did not become Ready within 120s; see ${this.logTail('kubelet')}`);
  }

  /**
   * Stops the real node and removes everything it made: the kubelet first (it would restart pods),
   * then every pod sandbox through the CRI (containers, shims, rootfs mounts, the CNI teardown of
   * veths and addresses), then kube-proxy, the forwarder, CoreDNS, containerd and the registry,
   * then what is left on the host (cleanNode). Its Node object and the `kubernetes` EndpointSlice
   * go too.
   */
  async stopNode(): Promise<void> {
    const saved = this.savedState();
    const p = nodePaths(this.dir);
    const kill = async (c: NodeComponent) => {
      for (const id of await this.ownPids(c, saved.pids)) await killGroup(id, 'SIGTERM');
      delete this.state.pids[c];
      this.children.delete(c);
    };
    await kill('kubelet');
    if ((await this.ownPids('containerd', saved.pids)).length > 0) {
      const crictl = join(saved.binDir, 'crictl');
      const r = await runProcess(crictl, [
        '--runtime-endpoint',
        `unix://${p.containerdSocket}`,
        'rmp',
        '-fa',
      ]);
      if (r.code !== 0) console.error(`crictl rmp failed (cleaning up anyway): ${r.stderr}`);
    }
    for (const c of ['kube-proxy', 'apiserver-proxy', 'coredns', 'containerd', 'registry'] as const)
      await kill(c);
    await killShims(this.dir);
    // Anything else started for the node names a file in its directory.
    for (const proc of await processesUsing(p.root)) await killGroup(proc.pid, 'SIGKILL');
    await cleanNode(this.dir);
    await this.get(`/api/v1/nodes/${REAL_NODE}`, 'DELETE').catch(() => undefined);
    await this.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes', 'DELETE').catch(
      () => undefined,
    );
    rmSync(p.root, { recursive: true, force: true });
    delete this.state.node;
    this.saveState();
  }

  private async waitHealthy(c: Component, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + 120_000;
    let exited: number | null = null;
    child.once('exit', (code) => {
      exited = code ?? -1;
    });
    while (Date.now() < deadline) {
      if (exited !== null) throw new Error(`${c} exited with ${exited}; see ${this.logTail(c)}`);
      if (await this.healthy(c)) return;
      await sleep(200);
    }
    throw new Error(`${c} did not become healthy within 120s; see ${this.logTail(c)}`);
  }

  private logTail(c: Component): string {
    const file = join(this.dir, 'logs', `${c}.log`);
    const text = existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-15).join('\n') : '';
    return `${file}:\n${text}`;
  }

  private async healthy(c: Component): Promise<boolean> {
    switch (c) {
      case 'etcd':
        return fetch(`http://127.0.0.1:${this.state.ports.etcd}/health`)
          .then((r) => r.ok)
          .catch(() => false);
      case 'kube-apiserver':
        return this.get('/readyz').then(
          (r) => r.status === 200,
          () => false,
        );
      case 'registry':
        return fetch(`http://127.0.0.1:${this.state.node?.ports.registry}/v2/`)
          .then((r) => r.ok)
          .catch(() => false);
      case 'containerd': {
        const crictl = join(this.state.binDir, 'crictl');
        const socket = `unix://${nodePaths(this.dir).containerdSocket}`;
        return (await runProcess(crictl, ['--runtime-endpoint', socket, 'info'])).code === 0;
      }
      case 'kube-proxy':
        return fetch(`http://127.0.0.1:${this.state.node?.ports.proxyHealthz}/healthz`)
          .then((r) => r.ok)
          .catch(() => false);
      case 'apiserver-proxy':
        return canConnect(NODE_IP, this.state.ports.apiserver);
      case 'coredns':
        return fetch(`http://127.0.0.1:${this.state.node?.ports.dnsReady}/ready`)
          .then((r) => r.ok)
          .catch(() => false);
      default:
        // Components without a serving port are healthy once they have run for a moment.
        await sleep(300);
        return true;
    }
  }

  /** A raw request as cluster-admin (used for readiness and bootstrap, before any client exists). */
  get(path: string, method = 'GET', body?: unknown): Promise<{ status: number; body: string }> {
    const k = this.certs;
    return new Promise((res, rej) => {
      const req = request(
        `${this.server}${path}`,
        {
          method,
          ca: readFileSync(k.caCert),
          cert: readFileSync(k.adminCert),
          key: readFileSync(k.adminKey),
          headers: { 'content-type': 'application/json' },
          timeout: 5_000,
        },
        (r) => {
          let text = '';
          r.on('data', (d) => {
            text += d;
          });
          r.on('end', () => res({ status: r.statusCode ?? 0, body: text }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', rej);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  private async ensureFakeNode(): Promise<void> {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: FAKE_NODE,
        annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { type: 'kwok', 'kubernetes.io/hostname': FAKE_NODE, 'kubernetes.io/os': 'linux' },
      },
      spec: {},
      // kwok keeps a node's own figures; its defaults have no ephemeral-storage, which every real
      // node reports, so a pod requesting some (the site chart's, for its emptyDir) would never
      // be scheduled.
      status: { capacity: FAKE_NODE_RESOURCES, allocatable: FAKE_NODE_RESOURCES },
    };
    const r = await this.get('/api/v1/nodes', 'POST', node);
    if (r.status !== 201 && r.status !== 409)
      throw new Error(`creating the fake node failed: ${r.status} ${r.body}`);
  }

  /** A kubeconfig for this API server with the given client certificate. */
  private kubeconfigFor(cert: string, key: string): string {
    const b64 = (f: string) => readFileSync(f).toString('base64');
    return `apiVersion: v1
kind: Config
clusters:
- name: static-export-test
  cluster:
    server: ${this.server}
    certificate-authority-data: ${b64(this.certs.caCert)}
users:
- name: user
  user:
    client-certificate-data: ${b64(cert)}
    client-key-data: ${b64(key)}
contexts:
- name: static-export-test
  context: {cluster: static-export-test, user: user}
current-context: static-export-test
`;
  }

  /** Written whole or not at all: a crash mid-write must not leave state.json unreadable. */
  private saveState(): void {
    if (!existsSync(this.dir)) return;
    const file = join(this.dir, 'state.json');
    writeFileSync(`${file}.tmp`, JSON.stringify(this.state, null, 2));
    renameSync(`${file}.tmp`, file);
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = connect(port, host, () => {
      socket.end();
      res(true);
    }).on('error', () => res(false));
  });
}

interface NodeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM (or the given signal) to the process group, SIGKILL after 10 s; resolves once it is gone. */
async function killGroup(pid: number, signal: NodeJS.Signals): Promise<void> {
  const send = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      /* already gone */
    }
  };
  send(signal);
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
  if (alive(pid)) send('SIGKILL');
  for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
}

/**
 * Processes whose command line names a file in `dir`: every component of the control plane there,
 * and anything else started with its kubeconfig (an operator under test).
 */
export async function processesUsing(dir: string): Promise<{ pid: number; command: string }[]> {
  const { stdout } = await promisify(execFile)('ps', ['-ww', '-eo', 'pid=,args='], { maxBuffer: 64 << 20 });
  return stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), command: m[2] ?? '' }))
    .filter((p) => p.command.includes(`${dir}/`) && p.pid !== process.pid);
}

export const DEFAULT_CLUSTER_DIR = resolve(here, '..', '..', '.cluster');
