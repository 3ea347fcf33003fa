// `npm run demo`: a local control plane, the admin API simulator (exporting the project's own docs/
// folder) and the operator; applies the sample StaticExportRelease with its Secret and shows it become Ready with its version and
// renewal time. Then serves the site: the site chart installed with Helm next to the release (the
// operator rolls it), its pod on the real node where one can run here (through the chart's
// Service), else run as local processes (the init container's command, real nginx with the chart's
// config; `--kwok` asks for that); new docs and a trigger show the site change. Stays up for
// exploring until Ctrl-C (`--once`: exits after the site changed, for tests). The simulator serves
// the platform's current export API and the sample release names spec.projectId; `--api-revision 1`:
// the contract's, and the release names spec.domain. The tools a path needs are checked before the
// first build, and whatever started is stopped on every exit, a failure's too.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startSimulator } from '../src/simulator/index.ts';
import { ControlPlane, PROJECT_IMAGE } from './control-plane/control-plane.ts';
import { NODE_IP, nodeUnavailable } from './control-plane/node.ts';
import { type DemoCluster, type DemoSite, siteAsLocalProcesses, siteOnNode } from './demo-site.ts';
import { missingTools } from './demo-tools.ts';
import { localOperatorArgs } from './operator-args.ts';

const root = resolve(import.meta.dirname, '..');
const once = process.argv.includes('--once');
/** `--api-revision 1` (or `=1`); 2, the platform's current one, by default. */
function apiRevisionArg(argv: string[]): 1 | 2 {
  const at = argv.findIndex((a) => a === '--api-revision' || a.startsWith('--api-revision='));
  if (at < 0) return 2;
  const value = argv[at]?.includes('=') ? argv[at]?.split('=')[1] : argv[at + 1];
  if (value !== '1' && value !== '2')
    throw new Error(`--api-revision takes 1 or 2, not ${value ?? 'nothing'}`);
  return value === '2' ? 2 : 1;
}
const apiRevision = apiRevisionArg(process.argv.slice(2));
const kubectlBin = join(root, '.tools', 'bin', 'kubectl');
const helmBin = join(root, '.tools', 'bin', 'helm');
const say = (text: string) => console.log(`\n▸ ${text}`);

const dir = mkdtempSync(join(tmpdir(), 'static-export-demo-'));
// nginx's unprivileged workers serve the site from in here.
chmodSync(dir, 0o755);
// The site the demo serves is the project's documentation; a copy, since the demo adds a page to it.
const docs = join(dir, 'docs');
cpSync(join(root, 'docs'), docs, { recursive: true });
const noNode = process.argv.includes('--kwok') ? 'not asked for (--kwok)' : await nodeUnavailable();
const missing = missingTools(!noNode, process.env.PATH ?? '');
if (missing) {
  console.error(`demo: ${missing}.`);
  process.exit(1);
}
say('Starting a local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)…');
const cp = await ControlPlane.start(join(dir, 'cluster'));
let site: DemoSite | undefined;
let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
let operator: ReturnType<typeof spawn> | undefined;
let stopping: Promise<never> | undefined;
/** Stops whatever started, once, whichever way the demo ends. */
function cleanup(code: number): Promise<never> {
  stopping ??= (async () => {
    await site?.stop().catch(() => undefined);
    operator?.kill('SIGTERM');
    await sim?.close().catch(() => undefined);
    await cp.stop();
    process.exit(code);
  })();
  return stopping;
}
process.once('SIGINT', () => void cleanup(0));
process.once('SIGTERM', () => void cleanup(0));
// An error no await catches (a child process's 'error' event) still stops the control plane.
const failed = (error: unknown) => {
  console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`);
  void cleanup(1);
};
process.on('uncaughtException', failed);
process.on('unhandledRejection', failed);
/** `promise`, or on its failure the demo stopped (a top-level await's rejection would skip that). */
const orStop = <T>(promise: Promise<T>): Promise<T> =>
  promise.catch((error: unknown) => {
    failed(error);
    return stopping as Promise<never>;
  });
const kubectl = (args: string[], input?: string) =>
  execFileSync(kubectlBin, ['--kubeconfig', cp.kubeconfig, ...args], { input, encoding: 'utf8' });
const kubectlAsync = async (args: string[]) =>
  (await promisify(execFile)(kubectlBin, ['--kubeconfig', cp.kubeconfig, ...args], { encoding: 'utf8' }))
    .stdout;
const helm = (args: string[]) =>
  execFileSync(helmBin, [...args, '--kubeconfig', cp.kubeconfig], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: dir },
  });

let node: { tag: string } | undefined;
if (noNode) {
  console.log(`  No real node: ${noNode}. The site's pod will run as processes on this machine.`);
} else {
  say(
    'Starting the real node: containerd, runc, the kubelet, kube-proxy (the first run builds them: minutes)…',
  );
  await orStop(cp.startNode());
  node = { tag: await orStop(cp.pushProjectImage()) };
  console.log(`  node static-export-node Ready; it pulls ${PROJECT_IMAGE}:${node.tag} from its own registry`);
}

say(
  `Starting the admin API simulator (API revision ${apiRevision}${apiRevision === 2 ? ', by project id' : ''}; exports take 3 s, bundle links live 90 s)…`,
);
// On the node's bridge address when pods fetch from it: the links it signs name that address.
sim = await orStop(
  startSimulator({
    apiRevision,
    exportDurationMs: 3_000,
    linkTtlSeconds: 90,
    docsDir: docs,
    ...(node ? { host: NODE_IP, port: 0 } : {}),
  }),
);
console.log(`  ${sim.baseUrl}, exporting the Markdown pages in ${docs}`);

say('Starting the operator: static-export operator');
const log = join(dir, 'operator.log');
operator = spawn(
  process.execPath,
  [
    join(root, 'src', 'cli', 'main.ts'),
    ...localOperatorArgs({ kubeconfig: cp.kubeconfig, apiBaseUrl: sim.baseUrl, workDir: join(dir, 'work') }),
    // The node's bridge address is not loopback; the simulator speaks plain HTTP.
    ...(node ? ['--allow-insecure-api-base-url'] : []),
  ],
  { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')] },
);
console.log(`  logs: ${log}`);

/** The sample release: by project id (any id: the simulator knows them all); in revision 1 by domain. */
function sampleRelease(): string {
  const sample = readFileSync(join(root, 'examples', 'static-export-release.yaml'), 'utf8');
  if (apiRevision === 2) return sample;
  const byDomain = sample.replace(
    /^ {2}projectId: .*$/m,
    "  domain: docs.example.com           # the contract's API revision",
  );
  if (byDomain === sample)
    throw new Error('examples/static-export-release.yaml has no spec.projectId line to replace');
  return byDomain;
}

try {
  say('Installing the CRDs, a namespace and the admin key Secret, then the sample release:');
  kubectl(['apply', '--server-side', '-f', join(root, 'crds')]);
  kubectl(['wait', '--for=condition=Established', '-f', join(root, 'crds')]);
  kubectl(['create', 'namespace', 'docs']);
  // The key from a file, never on a command line (the docs read it from standard input, a pipe in
  // a shell; a Node child's stdin is a socket, which kubectl cannot open as /dev/stdin).
  const keyFile = join(dir, 'admin-key');
  writeFileSync(keyFile, sim.adminKey, { mode: 0o600 });
  kubectl(['-n', 'docs', 'create', 'secret', 'generic', 'docs-admin-key', `--from-file=apiKey=${keyFile}`]);
  console.log(kubectl(['apply', '-f', '-'], sampleRelease()).trim());

  say('kubectl get ser -n docs -o wide, until Ready:');
  let last = '';
  const deadline = Date.now() + 120_000;
  for (;;) {
    const table = kubectl(['get', 'ser', '-n', 'docs', '-o', 'wide']);
    if (table !== last) process.stdout.write(last ? table.split('\n').slice(1).join('\n') : table);
    last = table;
    const ready = kubectl([
      'get',
      'ser',
      'docs',
      '-n',
      'docs',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    if (ready === 'True') break;
    if (Date.now() > deadline) throw new Error(`not Ready after 120 s; see ${log}`);
    await sleep(500);
  }
  const status = JSON.parse(
    kubectl(['get', 'ser', 'docs', '-n', 'docs', '-o', 'jsonpath={.status.current}']),
  ) as Record<string, string>;
  say('Ready. What the operator recorded (status.current; the bundle link itself is never stored there):');
  for (const [k, v] of Object.entries(status)) console.log(`  ${k.padEnd(12)} ${v}`);
  const values = Buffer.from(
    kubectl(['get', 'secret', 'docs-site-values', '-n', 'docs', '-o', 'jsonpath={.data.values\\.yaml}']),
    'base64',
  ).toString();
  const version = /version: (\S+)/.exec(values)?.[1];
  console.log(
    `\n  Secret docs/docs-site-values holds the staticExport values (enabled, bundleUrl, version=${version}).`,
  );
  say('Events:');
  console.log(kubectl(['get', 'events', '-n', 'docs', '--sort-by=.metadata.creationTimestamp']).trim());

  const servedVersion = () =>
    kubectl(['get', 'ser', 'docs', '-n', 'docs', '-o', 'jsonpath={.status.current.version}']);
  const deploymentVersion = () =>
    kubectl([
      'get',
      'deployment',
      'docs-static-export-site',
      '-n',
      'docs',
      '-o',
      'jsonpath={.spec.template.metadata.annotations.staticexport\\.dev/version}',
    ]);
  async function until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
    for (const deadline = Date.now() + ms; !test(); await sleep(300))
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms / 1000} s; see ${log}`);
  }

  say("Installing the site chart next to the release, reading the operator's Secret as it is:");
  console.log('  helm install docs charts/static-export-site -n docs \\');
  console.log(
    '    --set staticExport.enabled=true --set staticExport.existingSecret=docs-site-values --set replicaCount=1 \\',
  );
  const cluster: DemoCluster = {
    root,
    dir,
    kubectl,
    kubectlAsync,
    helm,
    siteValues: [
      '--set',
      'staticExport.enabled=true',
      '--set',
      'staticExport.existingSecret=docs-site-values',
      '--set',
      'replicaCount=1',
    ],
  };
  site = node ? await siteOnNode(cluster, node.tag) : await siteAsLocalProcesses(cluster);
  await until('the roll of the chart Deployment', () => deploymentVersion() === version);
  console.log(
    `  The operator rolled deployment/docs-static-export-site to ${version} (pod template annotation):`,
  );
  console.log(kubectl(['get', 'deployment,replicaset', '-n', 'docs']).trim());

  say(
    node
      ? 'Its pod on the real node: the init container (static-export fetch) fills the site from the link in the Secret, nginx serves it'
      : "Its pod on this machine (kwok's pods run nothing): the init container's command, then nginx with the chart's config",
  );
  await site.follow();
  const show = async (path: string) => {
    const res = await fetch(`${site?.baseUrl}${path}`);
    const heading = /<h1[^>]*>(.*?)<\/h1>/s.exec(await res.text())?.[1]?.replace(/<[^>]+>/g, '');
    console.log(`  GET ${path.padEnd(11)} ${res.status}  ${heading ?? ''}`);
  };
  console.log(
    node
      ? `  Serving the site through service/docs-static-export-site on ${site.baseUrl}/ (its ClusterIP, through kube-proxy)`
      : `  Serving the site on ${site.baseUrl}/`,
  );
  await show('/');
  await show('/whats-new');

  say('New docs, then a trigger:');
  writeFileSync(
    join(docs, 'whats-new.md'),
    '# New in this version\n\nThis page was added while the demo ran.\n',
  );
  console.log(`  wrote ${join(docs, 'whats-new.md')}`);
  const requested = String(Math.floor(Date.now() / 1000));
  console.log(`  kubectl annotate ser docs -n docs staticexport.dev/requested-at=${requested} --overwrite`);
  kubectl([
    'annotate',
    'ser',
    'docs',
    '-n',
    'docs',
    '--overwrite',
    `staticexport.dev/requested-at=${requested}`,
  ]);
  await until('the new version', () => servedVersion() !== version, 120_000);
  const next = servedVersion();
  await until('the roll to the new version', () => deploymentVersion() === next);
  console.log(`  Published ${next}; the operator rolled the Deployment (a new ReplicaSet):`);
  console.log(kubectl(['get', 'replicaset', '-n', 'docs']).trim());
  say('The rolled pod starts: its init container fetches the new version, nginx serves it:');
  await site.follow();
  await show('/whats-new');

  if (once) await cleanup(0);
  say('The demo keeps running (the site here follows each new version). In another terminal:');
  console.log(`  export KUBECONFIG=${cp.kubeconfig}`);
  console.log(`  ${kubectlBin} get ser -n docs -w                # the link is renewed before it expires`);
  console.log(
    `  ${kubectlBin} get rs -n docs -w                 # each new version rolls the site (a renewal rewrites only the Secret)`,
  );
  if (node)
    console.log(`  ${kubectlBin} logs -n docs deploy/docs-static-export-site -c fetch   # the pod's fetch`);
  console.log(`  edit the pages in ${docs}, then:`);
  console.log(
    `  ${kubectlBin} annotate ser docs -n docs staticexport.dev/requested-at="$(date +%s)" --overwrite   # export now`,
  );
  console.log(`  curl ${site.baseUrl}/`);
  console.log(`  tail -f ${log}`);
  console.log('\nStop with Ctrl-C (everything started here is stopped and removed).');
  for (let shown = next; ; await sleep(2_000)) {
    const current = deploymentVersion();
    if (current && current !== shown) {
      say(`New version rolled out: ${current}`);
      await site.follow();
      shown = current;
    }
  }
} catch (error) {
  if (error instanceof Error && 'stderr' in error) console.error(String(error.stderr));
  console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`);
  try {
    console.error(readFileSync(log, 'utf8').split('\n').slice(-20).join('\n'));
  } catch {
    /* no log yet */
  }
  await cleanup(1);
}
