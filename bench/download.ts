// Download + verify + extract of a large bundle: `static-export fetch` (the production CLI path)
// against the shell baseline `curl | tee | tar xz` plus `sha256sum` of the archive, in the same
// run, against the same simulator. Env: BENCH_BUNDLE_MB (default 200), BENCH_RUNS (default 3).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminApiClient, isExportFinished } from '../src/api/index.ts';
import { contentVersion } from '../src/bundle/index.ts';
import { startSimulator } from '../src/simulator/index.ts';
import { buildCli, CLI, ROOT } from './build.ts';

const NODE = join(ROOT, 'node_modules/.bin/node');
const TIME = '/usr/bin/time';
const MIB = 1024 * 1024;

interface Sample {
  seconds: number;
  /** Peak RSS in bytes, from GNU time; undefined without it. */
  maxRss?: number;
  stdout: string;
}

/** Runs a command under GNU time (when present) for its peak RSS; wall time measured here. */
async function measure(command: string, args: string[], env: Record<string, string>): Promise<Sample> {
  const withTime = existsSync(TIME);
  const started = performance.now();
  const child = spawn(withTime ? TIME : command, withTime ? ['-f', 'maxrss_kb=%M', command, ...args] : args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${command} exited ${code}: ${stderr.slice(-2000)}`);
  const rss = /maxrss_kb=(\d+)/.exec(stderr)?.[1];
  return { seconds, stdout, ...(rss ? { maxRss: Number(rss) * 1024 } : {}) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / MIB).toFixed(0)} MiB`);

export async function run(): Promise<void> {
  const targetMb = Number(process.env.BENCH_BUNDLE_MB ?? 200);
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const work = await mkdtemp(join(tmpdir(), 'bench-download-'));
  await buildCli();
  // Incompressible padding makes the archive about as large as its content.
  const sim = await startSimulator({ exportDurationMs: 0, padBytes: targetMb * MIB, linkTtlSeconds: 3600 });
  const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
  try {
    const rendered = performance.now();
    const { jobId } = await client.startExport({ domain: 'bench.example.com' });
    while (!isExportFinished(await client.getExport(jobId))) await new Promise((r) => setTimeout(r, 200));
    const bundle = await client.generateBundle(jobId);
    const size = bundle.sizeBytes as number;
    console.log(
      `bundle: ${(size / MIB).toFixed(1)} MiB archive, rendered in ${((performance.now() - rendered) / 1000).toFixed(1)} s; ${runs} runs each, median shown`,
    );

    const baseline: Sample[] = [];
    const ours: Sample[] = [];
    let oursVersion = '';
    for (let i = 0; i < runs; i++) {
      // Alternate so both sides see the same machine load and page cache state.
      const baseDir = join(work, `baseline-${i}`);
      await mkdir(join(baseDir, 'site'), { recursive: true });
      baseline.push(
        await measure(
          'sh',
          [
            '-c',
            'curl -sSf "$BUNDLE_URL" | tee "$DIR/bundle.tar.gz" | tar xz -C "$DIR/site" && sha256sum "$DIR/bundle.tar.gz"',
          ],
          { BUNDLE_URL: bundle.bundleUrl, DIR: baseDir },
        ),
      );
      await rm(baseDir, { recursive: true, force: true });

      const dest = join(work, `ours-${i}`);
      const sample = await measure(
        NODE,
        [CLI, 'fetch', '--json', '--dest', dest, '--expected-size', String(size)],
        {
          STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
        },
      );
      oursVersion = (JSON.parse(sample.stdout) as { version: string }).version;
      ours.push(sample);
      await rm(dest, { recursive: true, force: true });
    }

    // Same content on both sides: extract once more with the baseline and compare versions.
    const check = join(work, 'check');
    await mkdir(join(check, 'site'), { recursive: true });
    await measure('sh', ['-c', 'curl -sSf "$BUNDLE_URL" | tar xz -C "$DIR/site"'], {
      BUNDLE_URL: bundle.bundleUrl,
      DIR: check,
    });
    const same = (await contentVersion(join(check, 'site'))).version === oursVersion;

    const baseSec = median(baseline.map((s) => s.seconds));
    const ourSec = median(ours.map((s) => s.seconds));
    const throughput = (sec: number) => `${(size / MIB / sec).toFixed(1)} MiB/s`;
    const ourRss = Math.max(...ours.map((s) => s.maxRss ?? 0)) || undefined;
    const baseRss = Math.max(...baseline.map((s) => s.maxRss ?? 0)) || undefined;
    const ratio = baseSec / ourSec;
    console.log(
      `baseline  curl | tee | tar xz + sha256sum  ${baseSec.toFixed(2)} s  ${throughput(baseSec)}  peak RSS ${mb(baseRss)}`,
    );
    console.log(
      `ours      static-export fetch              ${ourSec.toFixed(2)} s  ${throughput(ourSec)}  peak RSS ${mb(ourRss)}`,
    );
    console.log(`ratio ours/baseline throughput: ${ratio.toFixed(2)}x (target >= 0.8x)`);
    console.log(`our peak RSS: ${mb(ourRss)} (target < 150 MiB)`);
    console.log(
      `all runs (s): baseline ${baseline.map((s) => s.seconds.toFixed(2)).join(' ')}; ours ${ours.map((s) => s.seconds.toFixed(2)).join(' ')}`,
    );
    console.log(`content identical to the baseline's extraction: ${same ? 'yes' : 'NO'} (${oursVersion})`);
  } finally {
    await client.close();
    await sim.close();
    await rm(work, { recursive: true, force: true });
  }
}
