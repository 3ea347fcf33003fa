// Download + verify + extract: `static-export fetch` (the production CLI path) against the shell
// baseline `curl | tee | tar xz` plus `sha256sum` of the archive, in the same run, from the same
// server, for three bundles: 200 MiB of content (the simulator's padded export), a 20,000-page
// site, and 200,000 entries (empty pages: the entry cap, where per-entry costs dominate).
// Env: BENCH_BUNDLE_MB (default 200), BENCH_RUNS (default 3; the many-entry cases run once
// unless BENCH_RUNS is set), BENCH_CASES (comma-separated names, default all).

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../scripts/run-process.ts';
import { AdminApiClient, isExportFinished } from '../src/api/index.ts';
import { contentVersion } from '../src/bundle/index.ts';
import { startSimulator } from '../src/simulator/index.ts';
import { type TarEntrySpec, tarGz } from '../test/support/tar-fixtures.ts';
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

interface Case {
  name: string;
  url: string;
  size: number;
  runs: number;
}

/** Runs a command under GNU time (when present) for its peak RSS; wall time measured here. */
export async function measure(command: string, args: string[], env: Record<string, string>): Promise<Sample> {
  const withTime = existsSync(TIME);
  const started = performance.now();
  const { code, stdout, stderr } = await runProcess(
    withTime ? TIME : command,
    withTime ? ['-f', 'maxrss_kb=%M', command, ...args] : args,
    { env: { ...process.env, ...env } },
  );
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${command} exited ${code}: ${stderr.slice(-2000)}`);
  const rss = /maxrss_kb=(\d+)/.exec(stderr)?.[1];
  return { seconds, stdout, ...(rss ? { maxRss: Number(rss) * 1024 } : {}) };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / MIB).toFixed(0)} MiB`);

/** Pages of about 4 KB of varied text, so they compress like HTML does (about 3-4x). */
function sitePages(count: number): TarEntrySpec[] {
  const words = Array.from({ length: 2000 }, () => randomBytes(4).toString('base64url').slice(0, 5));
  const page = (i: number) => {
    const body: string[] = [];
    for (let w = 0; w < 600; w++) body.push(words[(i * 7919 + w * 104729) % words.length] as string);
    return `<!doctype html><title>Page ${i}</title><main><h1>Page ${i}</h1><p>${body.join(' ')}</p></main>`;
  };
  return [
    { path: 'index.html', content: page(0) },
    ...Array.from({ length: count - 1 }, (_, i) => ({
      path: `docs/${Math.floor(i / 200)}/page-${i + 1}.html`,
      content: page(i + 1),
    })),
  ];
}

/** Entries only: 199,999 empty pages in 400 directories plus a root index. */
function manyEntries(count: number): TarEntrySpec[] {
  return [
    { path: 'index.html', content: '<h1>Home</h1>' },
    ...Array.from({ length: count - 1 }, (_, i) => ({ path: `e/${Math.floor(i / 500)}/${i}.html` })),
  ];
}

/** Serves fixed archives over HTTP, like a bundle store. */
async function serveArchives(archives: Record<string, Buffer>) {
  const server = createServer((req, res) => {
    const body = archives[(req.url ?? '').slice(1)];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/gzip' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Removes a run's output and flushes the deletion to disk, so the next run is not billed for it. */
async function settle(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await measure('sync', [], {});
}

async function runCase(c: Case, work: string): Promise<void> {
  const baseline: Sample[] = [];
  const ours: Sample[] = [];
  let oursVersion = '';
  for (let i = 0; i < c.runs; i++) {
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
        { BUNDLE_URL: c.url, DIR: baseDir },
      ),
    );
    await settle(baseDir);

    const dest = join(work, `ours-${i}`);
    const sample = await measure(
      NODE,
      [CLI, 'fetch', '--json', '--dest', dest, '--expected-size', String(c.size)],
      { STATIC_EXPORT_BUNDLE_URL: c.url },
    );
    oursVersion = (JSON.parse(sample.stdout) as { version: string }).version;
    ours.push(sample);
    await settle(dest);
  }

  // Same content on both sides: extract once more with the baseline and compare versions.
  const check = join(work, 'check');
  await mkdir(join(check, 'site'), { recursive: true });
  await measure('sh', ['-c', 'curl -sSf "$BUNDLE_URL" | tar xz -C "$DIR/site"'], {
    BUNDLE_URL: c.url,
    DIR: check,
  });
  const same = (await contentVersion(join(check, 'site'))).version === oursVersion;
  await rm(check, { recursive: true, force: true });

  const baseSec = median(baseline.map((s) => s.seconds));
  const ourSec = median(ours.map((s) => s.seconds));
  const throughput = (sec: number) => `${(c.size / MIB / sec).toFixed(1)} MiB/s`;
  const ourRss = Math.max(...ours.map((s) => s.maxRss ?? 0)) || undefined;
  const baseRss = Math.max(...baseline.map((s) => s.maxRss ?? 0)) || undefined;
  console.log(`-- ${c.name}: ${(c.size / MIB).toFixed(1)} MiB archive, ${c.runs} run(s) each, median shown`);
  console.log(
    `baseline  curl | tee | tar xz + sha256sum  ${baseSec.toFixed(2)} s  ${throughput(baseSec)}  peak RSS ${mb(baseRss)}`,
  );
  console.log(
    `ours      static-export fetch              ${ourSec.toFixed(2)} s  ${throughput(ourSec)}  peak RSS ${mb(ourRss)}`,
  );
  console.log(
    `ratio ours/baseline throughput: ${(baseSec / ourSec).toFixed(2)}x (target >= 1.5x); our peak RSS ${mb(ourRss)} (target < 100 MiB)`,
  );
  console.log(
    `all runs (s): baseline ${baseline.map((s) => s.seconds.toFixed(2)).join(' ')}; ours ${ours.map((s) => s.seconds.toFixed(2)).join(' ')}`,
  );
  console.log(`content identical to the baseline's extraction: ${same ? 'yes' : 'NO'} (${oursVersion})`);
}

export async function run(): Promise<void> {
  const targetMb = Number(process.env.BENCH_BUNDLE_MB ?? 200);
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const manyRuns = Number(process.env.BENCH_RUNS ?? 1);
  const selected = process.env.BENCH_CASES?.split(',');
  const wanted = (name: string) => !selected || selected.includes(name);
  const work = await mkdtemp(join(tmpdir(), 'bench-download-'));
  await buildCli();
  // Incompressible padding makes the archive about as large as its content.
  const sim = await startSimulator({ exportDurationMs: 0, padBytes: targetMb * MIB, linkTtlSeconds: 3600 });
  const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
  const archives: Record<string, Buffer> = {};
  if (wanted('site')) archives.site = tarGz(sitePages(20_000));
  if (wanted('entries')) archives.entries = tarGz(manyEntries(200_000));
  const store = await serveArchives(archives);
  try {
    if (wanted('large')) {
      const { jobId } = await client.startExport({ domain: 'bench.example.com' });
      while (!isExportFinished(await client.getExport(jobId))) await new Promise((r) => setTimeout(r, 200));
      const bundle = await client.generateBundle(jobId);
      await runCase(
        { name: `${targetMb} MiB bundle`, url: bundle.bundleUrl, size: bundle.sizeBytes as number, runs },
        work,
      );
    }
    const many: [string, string][] = [
      ['site', '20,000-page site'],
      ['entries', '200,000 entries'],
    ];
    for (const [key, name] of many) {
      const archive = archives[key];
      if (archive) await runCase({ name, url: store.url(key), size: archive.length, runs: manyRuns }, work);
    }
  } finally {
    await store.close();
    await client.close();
    await sim.close();
    await rm(work, { recursive: true, force: true });
  }
}
