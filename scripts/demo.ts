// `npm run demo`: a local control plane, the admin API simulator and the operator; applies the
// sample StaticExportRelease with its Secret and shows it become Ready with its version and
// renewal time. Then serves the site: the site chart installed with Helm next to the release (the
// operator rolls it), and its pod run on this machine (the init container's command, real nginx
// with the chart's config); new docs and a trigger show the site change. Stays up for exploring
// until Ctrl-C (`--once`: exits after the site changed, for tests).
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_DOCS_DIR, startSimulator } from '../src/simulator/index.ts';
import { ControlPlane } from './control-plane/control-plane.ts';
import { localOperatorArgs } from './operator-args.ts';
import {
  freePort,
  parseManifests,
  type RunningNginx,
  runInitContainer,
  type SecretData,
  startNginx,
} from './site-local.ts';

const root = resolve(import.meta.dirname, '..');
const once = process.argv.includes('--once');
const kubectlBin = join(root, '.tools', 'bin', 'kubectl');
const helmBin = join(root, '.tools', 'bin', 'helm');
const say = (text: string) => console.log(`\n▸ ${text}`);

const dir = mkdtempSync(join(tmpdir(), 'static-export-demo-'));
// nginx's unprivileged workers serve the site from in here.
chmodSync(dir, 0o755);
const docs = join(dir, 'docs');
cpSync(DEFAULT_DOCS_DIR, docs, { recursive: true });
say('Starting a local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)…');
const cp = await ControlPlane.start(join(dir, 'cluster'));
const kubectl = (args: string[], input?: string) =>
  execFileSync(kubectlBin, ['--kubeconfig', cp.kubeconfig, ...args], { input, encoding: 'utf8' });
const helm = (args: string[]) =>
  execFileSync(helmBin, [...args, '--kubeconfig', cp.kubeconfig], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: dir },
  });

say('Starting the admin API simulator (exports take 3 s, bundle links live 90 s)…');
const sim = await startSimulator({ exportDurationMs: 3_000, linkTtlSeconds: 90, docsDir: docs });
console.log(`  ${sim.baseUrl}, exporting the Markdown pages in ${docs}`);

say('Starting the operator: static-export operator');
const log = join(dir, 'operator.log');
const operator = spawn(
  process.execPath,
  [
    join(root, 'src', 'cli', 'main.ts'),
    ...localOperatorArgs({ kubeconfig: cp.kubeconfig, apiBaseUrl: sim.baseUrl, workDir: join(dir, 'work') }),
  ],
  { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')] },
);
console.log(`  logs: ${log}`);

let nginx: RunningNginx | undefined;
async function cleanup(code: number): Promise<never> {
  await nginx?.stop();
  operator.kill('SIGTERM');
  await sim.close();
  await cp.stop();
  process.exit(code);
}
process.once('SIGINT', () => void cleanup(0));
process.once('SIGTERM', () => void cleanup(0));

try {
  say('Installing the CRDs, a namespace and the admin key Secret, then the sample release:');
  kubectl(['apply', '--server-side', '-f', join(root, 'crds')]);
  kubectl(['wait', '--for=condition=Established', '-f', join(root, 'crds')]);
  kubectl(['create', 'namespace', 'docs']);
  kubectl([
    '-n',
    'docs',
    'create',
    'secret',
    'generic',
    'docs-admin-key',
    `--from-literal=apiKey=${sim.adminKey}`,
  ]);
  console.log(kubectl(['apply', '-f', join(root, 'examples', 'static-export-release.yaml')]).trim());

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
  const siteValues = [
    '--set',
    'staticExport.enabled=true',
    '--set',
    'staticExport.existingSecret=docs-site-values',
  ];
  console.log('  helm install docs charts/static-export-site -n docs \\');
  console.log(
    '    --set staticExport.enabled=true --set staticExport.existingSecret=docs-site-values --set replicaCount=1',
  );
  helm([
    'install',
    'docs',
    join(root, 'charts', 'static-export-site'),
    '-n',
    'docs',
    ...siteValues,
    '--set',
    'replicaCount=1',
  ]);
  await until('the roll of the chart Deployment', () => deploymentVersion() === version);
  console.log(
    `  The operator rolled deployment/docs-static-export-site to ${version} (pod template annotation):`,
  );
  console.log(kubectl(['get', 'deployment,replicaset', '-n', 'docs']).trim());

  say(
    "Its pod on this machine (kwok's pods run nothing): the init container's command, then nginx with the chart's config",
  );
  const port = await freePort();
  const objects = parseManifests(
    helm([
      'template',
      'docs',
      join(root, 'charts', 'static-export-site'),
      '-n',
      'docs',
      ...siteValues,
      '--set',
      `siteMountPath=${join(dir, 'www')}`,
      '--set',
      `containerPort=${port}`,
    ]),
  );
  /** What the kubelet does when the pod (re)starts: the init container fills the served directory. */
  async function runPod(): Promise<void> {
    const secret = JSON.parse(kubectl(['get', 'secret', 'docs-site-values', '-n', 'docs', '-o', 'json'])) as {
      data: Record<string, string>;
    };
    const secrets: SecretData = {
      'docs-site-values': Object.fromEntries(
        Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      ),
    };
    const r = await runInitContainer(objects, secrets, dir);
    if (r.code !== 0)
      throw new Error(`the init container's static-export fetch failed (${r.code}): ${r.stderr}`);
    console.log(
      `  static-export fetch: version ${secrets['docs-site-values']?.version} into ${join(dir, 'www', 'site')}`,
    );
  }
  await runPod();
  nginx = await startNginx(objects, port, dir);
  const show = async (path: string) => {
    const res = await fetch(`${nginx?.baseUrl}${path}`);
    const heading = /<h1[^>]*>(.*?)<\/h1>/s.exec(await res.text())?.[1]?.replace(/<[^>]+>/g, '');
    console.log(`  GET ${path.padEnd(11)} ${res.status}  ${heading ?? ''}`);
  };
  console.log(`  Serving the site on ${nginx.baseUrl}/`);
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
  await runPod();
  await show('/whats-new');

  if (once) await cleanup(0);
  say('The demo keeps running (the site here follows each new version). In another terminal:');
  console.log(`  export KUBECONFIG=${cp.kubeconfig}`);
  console.log(`  ${kubectlBin} get ser -n docs -w                # the link is renewed before it expires`);
  console.log(
    `  ${kubectlBin} get rs -n docs -w                 # each renewal and new version rolls the site`,
  );
  console.log(`  edit the pages in ${docs}, then:`);
  console.log(
    `  ${kubectlBin} annotate ser docs -n docs staticexport.dev/requested-at="$(date +%s)" --overwrite   # export now`,
  );
  console.log(`  curl ${nginx.baseUrl}/`);
  console.log(`  tail -f ${log}`);
  console.log('\nStop with Ctrl-C (everything started here is stopped and removed).');
  for (let shown = next; ; await sleep(2_000)) {
    const current = deploymentVersion();
    if (current && current !== shown) {
      say(`New version rolled out: ${current}`);
      await runPod();
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
