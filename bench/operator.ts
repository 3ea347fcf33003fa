// 1,000 StaticExportReleases against the local control plane and a simulator with instant
// exports: time from creation until all are Ready, the operator's peak RSS, API server writes per
// release, and writes per minute once everything is Ready and nothing changes.
// Env: BENCH_RELEASES (default 1000), BENCH_STEADY_SECONDS (default 60).
// Targets: all Ready within 120 s, peak RSS < 250 MB, <= 8 writes per release, 0 writes in steady state.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { ControlPlane } from '../scripts/control-plane/control-plane.ts';
import { localOperatorArgs } from '../scripts/operator-args.ts';
import { startSimulator } from '../src/simulator/index.ts';
import { buildCli, ROOT } from './build.ts';
import { sharedKeyScenario } from './operator-shared.ts';

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE']);
// What the operator writes; kwok and the controller-manager write nodes, leases, pods and so on.
const OPERATOR_RESOURCES = new Set(['staticexportreleases', 'secrets', 'events']);

/** Operator writes so far, from the API server's own request counter. */
async function operatorWrites(cp: ControlPlane): Promise<number> {
  const { body } = await cp.get('/metrics');
  let total = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!WRITE_VERBS.has(labels.verb ?? '') || !OPERATOR_RESOURCES.has(labels.resource ?? '')) continue;
    // The benchmark's own creates of releases and the Secret are not the operator's.
    if (labels.resource === 'staticexportreleases' && labels.subresource !== 'status') continue;
    if (labels.resource === 'secrets' && labels.verb === 'POST') continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** VmHWM (peak) or VmRSS (now) of a process, in MB. */
function rssMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

export async function run(): Promise<void> {
  const count = Number(process.env.BENCH_RELEASES ?? 1000);
  const steadySeconds = Number(process.env.BENCH_STEADY_SECONDS ?? 60);
  // BENCH_OPERATOR=shared runs only the shared-key part, =scale only the part above.
  if (process.env.BENCH_OPERATOR !== 'shared') await scenario(count, steadySeconds, false);
  if (process.env.BENCH_OPERATOR !== 'scale') await sharedKeyScenario();
}

/**
 * `count` releases until all are Ready, then `steadySeconds` with nothing changing. `idleOnly`
 * prints only the operator's resident memory at the end (the idle footprint).
 */
export async function scenario(count: number, steadySeconds: number, idleOnly: boolean): Promise<void> {
  const cli = await buildCli();
  const dir = mkdtempSync(join(tmpdir(), 'bench-operator-'));
  const cp = await ControlPlane.start(join(dir, 'cluster'));
  const sim = await startSimulator({ exportDurationMs: 0, linkTtlSeconds: 24 * 3600 });
  const kubectl = (args: string[], input?: string) =>
    execFileSync(join(ROOT, '.tools/bin/kubectl'), ['--kubeconfig', cp.kubeconfig, ...args], {
      input,
      encoding: 'utf8',
      maxBuffer: 256 << 20,
    });
  const operator = spawn(
    process.execPath,
    [
      cli,
      ...localOperatorArgs({
        kubeconfig: cp.kubeconfig,
        apiBaseUrl: sim.baseUrl,
        workDir: join(dir, 'work'),
        logLevel: 'warn',
        // The figures are the operator's own cost: the simulator here has no per-minute limit.
        apiRequestsPerMinute: 0,
      }),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    kubectl(['apply', '--server-side', '-f', join(ROOT, 'crds')]);
    kubectl(['wait', '--for=condition=Established', '-f', join(ROOT, 'crds')]);
    kubectl(['create', 'namespace', 'bench']);
    kubectl([
      '-n',
      'bench',
      'create',
      'secret',
      'generic',
      'admin-key',
      `--from-literal=apiKey=${sim.adminKey}`,
    ]);
    await sleep(2_000);
    const writesBefore = await operatorWrites(cp);

    const docs = Array.from({ length: count }, (_, i) =>
      stringify({
        apiVersion: 'staticexport.dev/v1alpha1',
        kind: 'StaticExportRelease',
        metadata: { name: `site-${i}`, namespace: 'bench' },
        spec: {
          domain: `site-${i}.example.com`,
          credentialsSecretRef: { name: 'admin-key' },
          target: { valuesSecret: { name: `site-${i}-values` } },
        },
      }),
    ).join('---\n');
    const started = performance.now();
    kubectl(['create', '-f', '-'], docs);
    const created = (performance.now() - started) / 1000;

    let ready = 0;
    while (ready < count && performance.now() - started < 600_000) {
      await sleep(1_000);
      const out = kubectl([
        'get',
        'ser',
        '-n',
        'bench',
        '-o',
        'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
      ]);
      ready = out.split('\n').filter((s) => s === 'True').length;
    }
    const allReady = (performance.now() - started) / 1000;
    await sleep(2_000);
    const writes = (await operatorWrites(cp)) - writesBefore;

    const steadyFrom = await operatorWrites(cp);
    const apiCallsFrom = sim.requests.length;
    await sleep(steadySeconds * 1000);
    const steadyWrites = (await operatorWrites(cp)) - steadyFrom;
    const rss = rssMb(operator.pid ?? 0, 'VmHWM');
    const idle = rssMb(operator.pid ?? 0, 'VmRSS');

    const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
    if (idleOnly) {
      console.log(
        `releases                      ${count}, ${ready === count ? 'all Ready' : `only ${ready} Ready`}`,
      );
      console.log(
        `operator idle RSS             ${idle.toFixed(0)} MB after ${steadySeconds} s with nothing changing   target < 100 MB: ${verdict(idle < 100)}`,
      );
      return;
    }
    console.log(`releases                      ${count} (created in ${created.toFixed(1)} s)`);
    console.log(
      `all Ready after creation      ${ready === count ? `${allReady.toFixed(1)} s` : `only ${ready} after ${allReady.toFixed(0)} s`}   target <= 120 s: ${verdict(ready === count && allReady <= 120)}`,
    );
    console.log(
      `operator peak RSS             ${rss.toFixed(0)} MB   target < 250 MB: ${verdict(rss < 250)}`,
    );
    console.log(
      `API server writes per release ${(writes / count).toFixed(2)} (${writes} in all)   target <= 8: ${verdict(writes / count <= 8)}`,
    );
    console.log(
      `steady-state writes/minute    ${((steadyWrites * 60) / steadySeconds).toFixed(1)} over ${steadySeconds} s   target 0: ${verdict(steadyWrites === 0)}`,
    );
    console.log(`steady-state admin API calls  ${sim.requests.length - apiCallsFrom}`);
  } finally {
    operator.kill('SIGTERM');
    await sim.close();
    await cp.stop();
  }
}
