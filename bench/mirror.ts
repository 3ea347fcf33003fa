// `mirror push` of the simulator's 200 MiB bundle (download, verify, package, push: one pass) to a
// local Distribution registry, against `skopeo copy` of the same image from an OCI directory
// (skopeo only reads and uploads: the strongest baseline), same run, alternating, each copy into
// an empty registry; then an
// incremental `mirror sync` of 50 unchanged domains (export, download, verify, find the version
// in the registry: no blob upload).
// Env: BENCH_BUNDLE_MB (default 200), BENCH_RUNS (default 3), BENCH_SYNC_DOMAINS (default 50).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../scripts/run-process.ts';
import { AdminApiClient, isExportFinished } from '../src/api/index.ts';
import { startSimulator } from '../src/simulator/index.ts';
import { startRegistry } from '../test/support/servers/registry.ts';
import { buildCli, CLI, ROOT } from './build.ts';
import { measure, median } from './download.ts';

const NODE = join(ROOT, 'node_modules/.bin/node');
const MIB = 1024 * 1024;
const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / MIB).toFixed(0)} MiB`);

function summaryOf(stdout: string): Record<string, number> {
  const line = stdout
    .split('\n')
    .filter((l) => l.includes('"event":"summary"'))
    .pop();
  if (!line) throw new Error(`no summary in: ${stdout.slice(-2000)}`);
  return JSON.parse(line) as Record<string, number>;
}

/** `command` against a registry of its own, started empty (closed after). */
async function withFreshRegistry<T>(run: (host: string) => Promise<T>): Promise<T> {
  const registry = await startRegistry();
  // The registry fsyncs each blob (about 0.5 s for 200 MiB here): the previous copy's dirty pages,
  // still being written back, would slow whichever copy comes next.
  await runProcess('sync', []);
  try {
    return await run(registry.host);
  } finally {
    await registry.close();
  }
}

async function pushCase(work: string): Promise<void> {
  const targetMb = Number(process.env.BENCH_BUNDLE_MB ?? 200);
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const sim = await startSimulator({ exportDurationMs: 0, padBytes: targetMb * MIB, linkTtlSeconds: 3600 });
  const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
  try {
    const { jobId } = await client.startExport({ domain: 'bench.example.com' });
    while (!isExportFinished(await client.getExport({ revision: 'contract', jobId })))
      await new Promise((r) => setTimeout(r, 200));
    const bundle = await client.generateBundle(jobId);
    const env = { STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl };
    // The same image for skopeo: saved by us, laid out as an OCI directory with the layer as is.
    const archive = join(work, 'site.tar');
    await measure(NODE, [CLI, 'mirror', 'save', '--to', archive, '--domain', 'bench.example.com'], env);
    const layout = join(work, 'layout');
    await measure(
      'skopeo',
      [
        'copy',
        '--preserve-digests',
        '--dest-oci-accept-uncompressed-layers',
        `oci-archive:${archive}`,
        `oci:${layout}:site`,
      ],
      {},
    );
    await rm(archive);

    const ours: Awaited<ReturnType<typeof measure>>[] = [];
    const base: Awaited<ReturnType<typeof measure>>[] = [];
    let layerBytes = 0;
    for (let i = 0; i < runs; i++) {
      // An empty registry for each copy: every blob is uploaded. (In one registry, skopeo's blob
      // info cache remembers where it pushed the layer before and mounts it from there: 0.1 s.)
      base.push(
        await withFreshRegistry((host) =>
          measure(
            'skopeo',
            [
              'copy',
              '--preserve-digests',
              '--dest-tls-verify=false',
              `oci:${layout}:site`,
              `docker://${host}/skopeo/run${i}:site`,
            ],
            {},
          ),
        ),
      );
      const sample = await withFreshRegistry((host) =>
        measure(
          NODE,
          [
            CLI,
            'mirror',
            'push',
            '--to',
            `oci://${host}/ours/run${i}`,
            '--domain',
            'bench.example.com',
            '--json',
          ],
          env,
        ),
      );
      const pushed = JSON.parse(sample.stdout.trim().split('\n').pop() as string) as { uploaded: number };
      if (pushed.uploaded !== 2) throw new Error(`expected 2 uploads, got ${sample.stdout}`);
      ours.push(sample);
    }
    layerBytes = (bundle.sizeBytes as number) ?? 0;
    const ourSec = median(ours.map((s) => s.seconds));
    const baseSec = median(base.map((s) => s.seconds));
    const throughput = (sec: number) => `${(layerBytes / MIB / sec).toFixed(1)} MiB/s`;
    const ourRss = Math.max(...ours.map((s) => s.maxRss ?? 0)) || undefined;
    const baseRss = Math.max(...base.map((s) => s.maxRss ?? 0)) || undefined;
    console.log(
      `-- mirror push: ${(layerBytes / MIB).toFixed(1)} MiB bundle, ${runs} run(s) each, median shown`,
    );
    console.log(
      `baseline  skopeo copy oci: -> docker://          ${baseSec.toFixed(2)} s  ${throughput(baseSec)}  peak RSS ${mb(baseRss)}`,
    );
    console.log(
      `ours      static-export mirror push --url (all)  ${ourSec.toFixed(2)} s  ${throughput(ourSec)}  peak RSS ${mb(ourRss)}`,
    );
    console.log(
      `ratio ours/skopeo throughput: ${(baseSec / ourSec).toFixed(2)}x (target >= 1.0x); our peak RSS ${mb(ourRss)} (target < 100 MB)`,
    );
    console.log(
      `all runs (s): skopeo ${base.map((s) => s.seconds.toFixed(2)).join(' ')}; ours ${ours.map((s) => s.seconds.toFixed(2)).join(' ')}`,
    );
  } finally {
    await client.close();
    await sim.close();
  }
}

async function syncCase(work: string, host: string): Promise<void> {
  const domains = Number(process.env.BENCH_SYNC_DOMAINS ?? 50);
  const sim = await startSimulator({ exportDurationMs: 0, linkTtlSeconds: 3600, requestsPerMinute: 0 });
  try {
    const config = join(work, 'mirror.yaml');
    const names = Array.from({ length: domains }, (_, i) => `site${i}.example.com`);
    await writeFile(
      config,
      `target: oci://${host}/sync\nkeep: 3\nconcurrency: 8\ndomains:\n${names.map((n) => `  - ${n}`).join('\n')}\n`,
    );
    const env = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
    const args = [CLI, 'mirror', 'sync', '--config', config, '--json', '--poll-interval', '100ms'];
    const first = await measure(NODE, args, env);
    const initial = summaryOf(first.stdout);
    const again = await measure(NODE, args, env);
    const summary = summaryOf(again.stdout);
    console.log(`-- mirror sync of ${domains} domains (concurrency 8)`);
    console.log(
      `first sync: ${first.seconds.toFixed(2)} s, ${initial.pushed} pushed, ${initial.uploaded} blob(s) uploaded`,
    );
    console.log(
      `incremental, nothing changed: ${again.seconds.toFixed(2)} s (target < 5 s), ${summary.unchanged} unchanged, ` +
        `${summary.uploaded} blob(s) uploaded (target 0), peak RSS ${mb(again.maxRss)}`,
    );
  } finally {
    await sim.close();
  }
}

export async function run(): Promise<void> {
  await buildCli();
  const work = await mkdtemp(join(tmpdir(), 'bench-mirror-'));
  try {
    const cases = process.env.BENCH_CASES?.split(',');
    if (!cases || cases.includes('push')) await pushCase(work);
    if (!cases || cases.includes('sync')) await withFreshRegistry((host) => syncCase(work, host));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
