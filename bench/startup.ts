// What each entry point loads before it does any work: the CLI per command (`--version`, a
// command's `--help`) and the operator's code once its command has imported the controllers. For
// each: modules loaded (counted by a module load hook: deterministic, so a regression shows at
// once even on a busy machine), the packages among them, wall time and resident memory (median
// of BENCH_RUNS, default 5). With BENCH_BASELINE=<directory of another checkout> each figure is
// taken alternately there and here, pair by pair, and printed with the ratio here/baseline.
// Targets (issue 43): no more modules than 1ce9e68 for any entry, time and RSS within noise of it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const HERE = resolve(import.meta.dirname, '..');

/**
 * Preloaded into each measured process: records every module Node loads, and the resident memory
 * at exit, into $STARTUP_MODULES (the URLs a line each, then `RSS <bytes>`).
 */
const HOOK = `
const { registerHooks } = require('node:module');
const seen = [];
registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });
process.on('exit', () =>
  require('node:fs').writeFileSync(process.env.STARTUP_MODULES, seen.join('\\n') + '\\nRSS ' + process.memoryUsage().rss));
`;

interface Entry {
  name: string;
  args: string[];
}

const OPERATOR_IMPORT =
  "await import('./src/cli/commands/operator.ts'); await import('./src/controllers/manager.ts'); " +
  "await import('./src/log.ts'); await import('./src/runtime/shutdown.ts');";

const ENTRIES: Entry[] = [
  { name: 'static-export --version', args: ['src/cli/main.ts', '--version'] },
  { name: 'static-export fetch --help', args: ['src/cli/main.ts', 'fetch', '--help'] },
  { name: 'static-export export --help', args: ['src/cli/main.ts', 'export', '--help'] },
  { name: 'static-export mirror --help', args: ['src/cli/main.ts', 'mirror', '--help'] },
  { name: 'static-export --help', args: ['src/cli/main.ts', '--help'] },
  // What the operator command has loaded once it runs (no cluster needed to import it).
  { name: 'operator (controllers imported)', args: ['--input-type=module', '-e', OPERATOR_IMPORT] },
];

interface Sample {
  modules: number;
  packages: number;
  ms: number;
  rssMb: number;
}

function sampleOnce(checkout: string, entry: Entry, hookFile: string): Sample {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-startup-')), 'modules.txt');
  const node = process.execPath;
  const started = process.hrtime.bigint();
  const r = spawnSync(node, ['--require', hookFile, ...entry.args], {
    cwd: checkout,
    env: { ...process.env, STARTUP_MODULES: out, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0)
    throw new Error(`${entry.name} in ${checkout} exited ${r.status}: ${r.stderr.slice(0, 400)}`);
  const [modulesText, rss] = readFileSync(out, 'utf8').split('\nRSS ');
  const urls = (modulesText ?? '').split('\n').filter(Boolean);
  const packages = new Set(
    urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter(Boolean),
  );
  return { modules: urls.length, packages: packages.size, ms, rssMb: Number(rss) / 1024 / 1024 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

function summary(samples: Sample[]): Sample {
  return {
    modules: median(samples.map((s) => s.modules)),
    packages: median(samples.map((s) => s.packages)),
    ms: median(samples.map((s) => s.ms)),
    rssMb: median(samples.map((s) => s.rssMb)),
  };
}

const show = (s: Sample) =>
  `${String(s.modules).padStart(4)} modules (${String(s.packages).padStart(3)} packages), ` +
  `${s.ms.toFixed(0).padStart(4)} ms, ${s.rssMb.toFixed(1).padStart(6)} MB RSS`;

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const baseline = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
  const hookFile = join(mkdtempSync(join(tmpdir(), 'bench-startup-hook-')), 'hook.cjs');
  writeFileSync(hookFile, HOOK);
  console.log(`entry points, median of ${runs}${baseline ? `, alternating with ${baseline}` : ''}:`);
  for (const entry of ENTRIES) {
    const here: Sample[] = [];
    const base: Sample[] = [];
    for (let i = 0; i < runs; i++) {
      // Alternate, so a change of load on the machine falls on both sides alike.
      if (baseline) base.push(sampleOnce(baseline, entry, hookFile));
      here.push(sampleOnce(HERE, entry, hookFile));
    }
    const h = summary(here);
    if (!baseline) {
      console.log(`  ${entry.name.padEnd(34)} ${show(h)}`);
      continue;
    }
    const b = summary(base);
    const ratios = here.map((s, i) => (s.ms / (base[i] as Sample).ms).toFixed(2)).join(' ');
    console.log(`  ${entry.name}`);
    console.log(`    baseline ${show(b)}`);
    console.log(
      `    here     ${show(h)}   time ratio per pair: ${ratios}; RSS ratio ${(h.rssMb / b.rssMb).toFixed(3)}`,
    );
  }
}
