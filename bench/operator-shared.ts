// Part of the operator benchmark (issue 12): 100 StaticExportReleases over 10 domains sharing one
// admin key, against a simulator that enforces the platform's 100 requests per key and minute and
// takes BENCH_SHARED_EXPORT_SECONDS (default 30) per export. Prints the admin API calls the
// operator used (by endpoint), the 429s it drew (goal 0), the exports started (one per domain
// when releases share them), the bundle downloads, and the time until all are Ready.
// Env: BENCH_SHARED_RELEASES (default 100), BENCH_SHARED_DOMAINS (default 10).
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchReleases, createReleases, startLocalStack } from './local-stack.ts';

const ADMIN_ENDPOINTS = ['start', 'status', 'bundle'] as const;

export async function sharedKeyScenario(): Promise<void> {
  const count = Number(process.env.BENCH_SHARED_RELEASES ?? 100);
  const domains = Number(process.env.BENCH_SHARED_DOMAINS ?? 10);
  const exportMs = Number(process.env.BENCH_SHARED_EXPORT_SECONDS ?? 30) * 1000;
  // The operator's own limit at its default (90 per key and minute).
  const { dir, cp, sim, kubectl, stop } = await startLocalStack({
    prefix: 'bench-shared-',
    simulator: () => ({ exportDurationMs: exportMs, linkTtlSeconds: 24 * 3600, requestsPerMinute: 100 }),
    namespace: 'bench',
    maxBuffer: 64 << 20,
  });
  try {
    await sleep(2_000);
    const docs = benchReleases(count, (i) => `docs-${i % domains}.example.com`);
    const from = sim.requests.length;
    const createdAt = sim.now();
    const started = performance.now();
    await createReleases(cp.kubeconfig, docs);
    let ready = 0;
    while (ready < count && performance.now() - started < 900_000) {
      await sleep(1_000);
      const out = await kubectl([
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
    const seen = sim.requests.slice(from);
    const admin = seen.filter((r) => (ADMIN_ENDPOINTS as readonly string[]).includes(r.endpoint));
    const by = (e: string) => admin.filter((r) => r.endpoint === e).length;
    const limited = admin.filter((r) => r.status === 429).length;
    const downloads = seen.filter((r) => r.endpoint === 'download').length;
    const minutes = allReady / 60;
    const secondsIn = (e: string, pick: (ts: number[]) => number) =>
      ((pick(admin.filter((r) => r.endpoint === e).map((r) => r.time)) - createdAt) / 1000).toFixed(1);
    console.log(
      `shared key: ${count} releases over ${domains} domains, one key, exports of ${exportMs / 1000} s, simulator limit 100 requests/min per key`,
    );
    console.log(
      `  all Ready after creation    ${ready === count ? `${allReady.toFixed(1)} s` : `only ${ready} after ${allReady.toFixed(0)} s`}`,
    );
    console.log(
      `  admin API calls             ${admin.length} (start ${by('start')}, status ${by('status')}, bundle ${by('bundle')}); ${(admin.length / minutes).toFixed(0)}/min`,
    );
    console.log(`  429s drawn                  ${limited}   goal 0: ${limited === 0 ? 'ok' : 'MISSED'}`);
    console.log(
      `  exports started             ${sim.exportJobsStarted()} (one per domain: ${domains}; without sharing ${count})`,
    );
    console.log(`  bundle downloads            ${downloads}`);
    console.log(
      `  timeline                    exports started ${secondsIn('start', (t) => Math.min(...t))}-${secondsIn('start', (t) => Math.max(...t))} s after creation, last bundle link at ${secondsIn('bundle', (t) => Math.max(...t))} s`,
    );
  } finally {
    await stop();
    await rm(dir, { recursive: true, force: true });
  }
}
