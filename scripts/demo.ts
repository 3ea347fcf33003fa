// `npm run demo`: a local control plane, the admin API simulator and the operator; applies the
// sample StaticExportRelease with its Secret and shows it become Ready with its version and
// renewal time. Stays up for exploring until Ctrl-C (`--once`: exits when Ready, for tests).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../src/simulator/index.ts';
import { ControlPlane } from './control-plane/control-plane.ts';
import { localOperatorArgs } from './operator-args.ts';

const root = resolve(import.meta.dirname, '..');
const once = process.argv.includes('--once');
const kubectlBin = join(root, '.tools', 'bin', 'kubectl');
const say = (text: string) => console.log(`\n▸ ${text}`);

const dir = mkdtempSync(join(tmpdir(), 'static-export-demo-'));
say('Starting a local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)…');
const cp = await ControlPlane.start(join(dir, 'cluster'));
const kubectl = (args: string[], input?: string) =>
  execFileSync(kubectlBin, ['--kubeconfig', cp.kubeconfig, ...args], { input, encoding: 'utf8' });

say('Starting the admin API simulator (exports take 3 s, bundle links live 90 s)…');
const sim = await startSimulator({ exportDurationMs: 3_000, linkTtlSeconds: 90 });
console.log(`  ${sim.baseUrl}`);

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

async function cleanup(code: number): Promise<never> {
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

  if (once) await cleanup(0);
  say('The demo keeps running. In another terminal:');
  console.log(`  export KUBECONFIG=${cp.kubeconfig}`);
  console.log(`  ${kubectlBin} get ser -n docs -w                # the link is renewed before it expires`);
  console.log(
    `  ${kubectlBin} annotate ser docs -n docs staticexport.dev/requested-at="$(date +%s)"   # export now`,
  );
  console.log(`  tail -f ${log}`);
  console.log('\nStop with Ctrl-C (everything started here is stopped and removed).');
  await new Promise(() => {});
} catch (error) {
  console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`);
  try {
    console.error(readFileSync(log, 'utf8').split('\n').slice(-20).join('\n'));
  } catch {
    /* no log yet */
  }
  await cleanup(1);
}
