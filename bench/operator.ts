// 1,000 StaticExportReleases against the local control plane and a simulator with instant
// exports: time from creation until all are Ready, the operator's peak RSS, API server writes per
// release, and writes per minute once everything is Ready and nothing changes.
// Env: BENCH_RELEASES (default 1000), BENCH_STEADY_SECONDS (default 60), BENCH_CPU_PROF (a directory
// for the operator's CPU profile), BENCH_HEAP_SNAPSHOT (a directory for the operator's heap
// snapshots before the releases are created and at the end; writing the first one raises the
// peak RSS printed, so measure that without).
// Targets (issue 12): all Ready within 30 s per 1,000 releases (time per release flat up to 3,000), peak RSS < 150 MB, <= 8 writes per release, 0 writes in steady state.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlPlane } from '../scripts/control-plane/control-plane.ts';
import { GROUP_VERSION, SER_PLURAL } from '../src/crd/index.ts';
import type { Condition } from '../src/runtime/conditions.ts';
import { Informer, type KubeObject } from '../src/runtime/informer.ts';
import { KubeClient } from '../src/runtime/kube-client.ts';
import { benchReleases, createReleases, startLocalStack } from './local-stack.ts';
import { sharedKeyScenario } from './operator-shared.ts';

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE']);
// What the operator writes; kwok and the controller-manager write nodes, leases, pods and so on.
const OPERATOR_RESOURCES = new Set([
  'staticexportreleases',
  'secrets',
  'events',
  'deployments',
  'statefulsets',
]);
// The benchmark creates the releases and watches them (from before the first count).
const BENCH_OWN = new Set(['POST staticexportreleases', 'WATCH staticexportreleases']);

/** API server requests so far by `VERB resource[/subresource]`, from the API server's own counter. */
async function requestCounts(cp: ControlPlane): Promise<Map<string, number>> {
  const { body } = await cp.get('/metrics');
  const counts = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!OPERATOR_RESOURCES.has(labels.resource ?? '')) continue;
    const what = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    counts.set(what, (counts.get(what) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

const diffCounts = (after: Map<string, number>, before: Map<string, number>) =>
  new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v > 0));

/** The operator's requests among `counts`: the benchmark's own creates and its watch are not. */
const operatorRequests = (counts: Map<string, number>) =>
  new Map([...counts].filter(([what]) => !BENCH_OWN.has(what)));

const sum = (counts: Map<string, number>, verbs?: Set<string>) =>
  [...counts].reduce((t, [what, n]) => (!verbs || verbs.has(what.split(' ')[0] ?? '') ? t + n : t), 0);

/** User + system CPU seconds a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime, fields 14 and 15 of stat (11 and 12 after the command), in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** VmHWM (peak) or VmRSS (now) of a process, in MB. */
function rssMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Has process `pid` (started with --heapsnapshot-signal=SIGUSR2) write a heap snapshot into `dir`; waits until written. */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  const snapshots = () => readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot'));
  const before = snapshots().length;
  process.kill(pid, 'SIGUSR2');
  // Node writes the file in place: it is done once a new one exists and its size stops changing.
  let size = -1;
  for (;;) {
    await sleep(1_000);
    const file = snapshots().sort().at(-1);
    if (snapshots().length <= before || !file) continue;
    const now = statSync(join(dir, file)).size;
    if (now === size && now > 0) return;
    size = now;
  }
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
  const heapDir = process.env.BENCH_HEAP_SNAPSHOT;
  const { cp, sim, operator, stop } = await startLocalStack({
    prefix: 'bench-operator-',
    simulator: () => ({ exportDurationMs: 0, linkTtlSeconds: 24 * 3600 }),
    namespace: 'bench',
    maxBuffer: 256 << 20,
    // BENCH_CPU_PROF=<dir>: the operator writes a V8 CPU profile there when it exits.
    nodeArgs: [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []),
      ...(heapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : []),
    ],
    // The figures are the operator's own cost: the simulator here has no per-minute limit.
    operator: { apiRequestsPerMinute: 0 },
    operatorArgs: process.env.BENCH_CONCURRENCY ? ['--concurrency', process.env.BENCH_CONCURRENCY] : [],
  });
  try {
    // Readiness from a watch, not a `kubectl get` each second: listing thousands of releases every
    // second would load the 2 cores the operator and the API server share with the benchmark.
    const kube = await KubeClient.create(cp.kubeconfig);
    const releases = new Informer<KubeObject & { status?: { conditions?: Condition[] } }>({
      client: kube,
      apiVersion: GROUP_VERSION,
      plural: SER_PLURAL,
      namespaces: ['bench'],
      resyncMs: 0,
    });
    const ready = new Set<string>();
    let lastReadyAt = 0;
    releases.onChange((type, obj) => {
      const key = obj.metadata.name;
      const isReady = obj.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      if (type !== 'DELETED' && isReady) {
        if (!ready.has(key)) lastReadyAt = performance.now();
        ready.add(key);
      } else ready.delete(key);
    });
    releases.start();
    await releases.waitForSync();
    await sleep(2_000);
    if (heapDir) await heapSnapshot(operator.pid ?? 0, heapDir);
    const before = await requestCounts(cp);

    const docs = benchReleases(count, (i) => `site-${i}.example.com`);
    const pids = (
      JSON.parse(readFileSync(join(cp.dir, 'state.json'), 'utf8')) as { pids: Record<string, number> }
    ).pids;
    const processes = {
      operator: operator.pid ?? 0,
      'kube-apiserver': pids['kube-apiserver'] ?? 0,
      etcd: pids.etcd ?? 0,
      'benchmark and simulator': process.pid,
    };
    const cpuFrom = Object.fromEntries(Object.entries(processes).map(([k, pid]) => [k, cpuSeconds(pid)]));
    const started = performance.now();
    await createReleases(cp.kubeconfig, docs);
    const created = (performance.now() - started) / 1000;

    while (ready.size < count && performance.now() - started < Math.max(900_000, count * 600))
      await sleep(200);
    const allReady = ((ready.size === count ? lastReadyAt : performance.now()) - started) / 1000;
    const cpuUsed = Object.entries(processes).map(
      ([k, pid]) => [k, cpuSeconds(pid) - (cpuFrom[k] ?? 0)] as const,
    );
    const cpu = cpuUsed[0]?.[1] ?? 0;
    await sleep(2_000);
    const requests = operatorRequests(diffCounts(await requestCounts(cp), before));
    const writes = sum(requests, WRITE_VERBS);

    const steadyFrom = await requestCounts(cp);
    const apiCallsFrom = sim.requests.length;
    await sleep(steadySeconds * 1000);
    const steadyWrites = sum(operatorRequests(diffCounts(await requestCounts(cp), steadyFrom)), WRITE_VERBS);
    await releases.stop();
    await kube.close();
    const rss = rssMb(operator.pid ?? 0, 'VmHWM');
    const idle = rssMb(operator.pid ?? 0, 'VmRSS');
    if (heapDir) await heapSnapshot(operator.pid ?? 0, heapDir);

    const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
    if (idleOnly) {
      console.log(
        `releases                      ${count}, ${ready.size === count ? 'all Ready' : `only ${ready.size} Ready`}`,
      );
      console.log(
        `operator idle RSS             ${idle.toFixed(0)} MB after ${steadySeconds} s with nothing changing   target < 100 MB: ${verdict(idle < 100)}`,
      );
      return;
    }
    console.log(`releases                      ${count} (created in ${created.toFixed(1)} s)`);
    const allDone = ready.size === count;
    console.log(
      `all Ready after creation      ${allDone ? `${allReady.toFixed(1)} s (${((allReady * 1000) / count).toFixed(1)} ms per release)` : `only ${ready.size} after ${allReady.toFixed(0)} s`}   target <= 30 s for 1,000: ${verdict(allDone && allReady <= (30 * count) / 1000)}`,
    );
    console.log(
      `operator CPU until all Ready  ${cpu.toFixed(1)} s (${((cpu / allReady) * 100).toFixed(0)} % of one core; machine load ${loadavg()[0]?.toFixed(1)})`,
    );
    console.log(
      `CPU until all Ready           ${cpuUsed.map(([k, s]) => `${k} ${s.toFixed(1)} s`).join(', ')}`,
    );
    console.log(
      `operator peak RSS             ${rss.toFixed(0)} MB   target < 150 MB: ${verdict(rss < 150)}`,
    );
    console.log(
      `API server writes per release ${(writes / count).toFixed(2)} (${writes} in all)   target <= 8: ${verdict(writes / count <= 8)}`,
    );
    console.log(`API server requests per release, by verb and resource:`);
    for (const [what, n] of [...requests].sort((a, b) => b[1] - a[1]))
      console.log(`  ${what.padEnd(40)} ${(n / count).toFixed(2)}`);
    console.log(
      `steady-state writes/minute    ${((steadyWrites * 60) / steadySeconds).toFixed(1)} over ${steadySeconds} s   target 0: ${verdict(steadyWrites === 0)}`,
    );
    console.log(`steady-state admin API calls  ${sim.requests.length - apiCallsFrom}`);
  } finally {
    // Its CPU profile (BENCH_CPU_PROF) is written as it exits.
    await stop(40_000);
  }
}
