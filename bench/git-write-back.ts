// Git write-back against a large repository: 10,000 commits and about 100 MB, served by the real
// git http-backend on loopback. Two shapes, because a depth-1 fetch brings the whole tree of the
// branch's tip however short the history: `history` keeps most bytes in history (a 1 MB tip),
// `head` keeps them in the tip (100 MB of files in the checked-out tree). Prints the median commit
// latency of a few writes and the peak RSS of a child process doing one write (compiled JS, as
// shipped). The repositories are built once with `git fast-import` and cached outside the checkout.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { writeVersion } from '../src/git/write-version.ts';
import { writeRequest } from '../test/support/fixtures/write-request.ts';
import { GitServer, runGit } from '../test/support/servers/git-server.ts';
import { BUILD, buildCli } from './build.ts';

const COMMITS = 10_000;
const WRITES = 5;
const CACHE = join(
  process.env.STATIC_EXPORT_CACHE ?? join(homedir(), '.cache', 'static-export-operator'),
  'git-bench',
);
export const USER = 'bench';
export const PASSWORD = 'bench-password-0123456789';
const VALUES = '# the docs site\nstaticExport:\n  enabled: true\n  version: "sha256-0"\n';

type Shape = 'history' | 'head';

/** fast-import input: the big files first (head) or rewritten commit after commit (history). */
export async function buildRepository(shape: Shape): Promise<string> {
  const bare = join(CACHE, `${shape}.git`);
  if (existsSync(join(bare, 'bench-complete'))) return bare;
  rmSync(bare, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  runGit(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  const child = spawn('git', ['fast-import', '--quiet'], {
    cwd: bare,
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  const write = (chunk: string | Buffer) =>
    child.stdin.write(chunk)
      ? Promise.resolve()
      : new Promise<void>((r) => child.stdin.once('drain', () => r()));
  const file = async (path: string, bytes: Buffer | string) => {
    const data = Buffer.from(bytes);
    await write(`M 100644 inline ${path}\ndata ${data.length}\n`);
    await write(data);
    await write('\n');
  };
  for (let i = 1; i <= COMMITS; i++) {
    const message = `commit ${i}`;
    await write(
      `commit refs/heads/main\nmark :${i}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\n`,
    );
    await write(`data ${message.length}\n${message}\n${i > 1 ? `from :${i - 1}\n` : ''}`);
    if (i === 1) {
      await file('deploy/values.yaml', VALUES);
      // head: 100 files of 1 MB (random, so nothing compresses) stay in every commit's tree.
      if (shape === 'head')
        for (let f = 0; f < 100; f++) await file(`assets/blob-${f}.bin`, randomBytes(1024 * 1024));
    }
    // history: 10 KB rewritten per commit, 100 MB in all, 1 MB in the tip; head: a line per commit.
    if (shape === 'history') await file(`data/f${i % 100}.bin`, randomBytes(10 * 1024));
    else await file(`log/f${i % 100}.txt`, `${i}\n`);
  }
  child.stdin.end();
  await new Promise<void>((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}`)),
    ),
  );
  runGit(['repack', '-a', '-d', '--quiet'], { cwd: bare });
  writeFileSync(join(bare, 'bench-complete'), '');
  return bare;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

const request = (url: string, version: string) =>
  writeRequest(url, { kind: 'basic', username: USER, password: PASSWORD }, { version, timeoutMs: 300_000 });

/**
 * One write in a fresh Node process running the compiled engine (`build`: another compilation of
 * src/, such as an older commit's): its peak RSS.
 */
export async function childWrite(
  url: string,
  version: string,
  build = BUILD,
): Promise<{ outcome: string; ms: number; maxRssKb: number }> {
  const module = pathToFileURL(join(build, 'git/write-version.js')).href;
  const code = `
    const { writeVersion } = await import(${JSON.stringify(module)});
    const started = performance.now();
    const outcome = await writeVersion(${JSON.stringify(request(url, version))});
    console.log(JSON.stringify({ outcome: outcome.outcome === 'Failed' ? outcome.message : outcome.outcome, ms: performance.now() - started, maxRssKb: process.resourceUsage().maxRSS }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout.trim());
}

export async function idleChild(build = BUILD): Promise<number> {
  const module = pathToFileURL(join(build, 'git/write-version.js')).href;
  const code = `await import(${JSON.stringify(module)}); console.log(process.resourceUsage().maxRSS);`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code]);
  return Number(stdout.trim()) * 1024;
}

export async function run(): Promise<void> {
  await buildCli();
  const root = mkdtempSync(join(tmpdir(), 'git-bench-'));
  const server = await new GitServer(root, { username: USER, password: PASSWORD }).start();
  try {
    console.log(`child process with the engine loaded, no write: peak RSS ${mib(await idleChild())}`);
    for (const shape of ['history', 'head'] as const) {
      const started = performance.now();
      const cached = await buildRepository(shape);
      const built = performance.now() - started;
      // A shared clone per run: pushes land there, the cached repository stays as built.
      const bare = server.gitDir(shape);
      runGit(['clone', '--quiet', '--bare', '--shared', cached, bare]);
      runGit(['config', 'http.receivepack', 'true'], { cwd: bare });
      const size =
        Number(runGit(['count-objects', '-v'], { cwd: cached }).match(/size-pack: (\d+)/)?.[1] ?? 0) * 1024;
      const tip = Number(
        runGit(['ls-tree', '-r', '-l', 'main'], { cwd: cached })
          .split('\n')
          .reduce((sum, line) => sum + (Number(line.split(/\s+/)[3]) || 0), 0),
      );
      console.log(
        `${shape}: ${COMMITS} commits, pack ${mib(size)}, tip tree ${mib(tip)}${built > 1000 ? ` (built in ${(built / 1000).toFixed(0)} s)` : ''}`,
      );
      const times: number[] = [];
      let refused: string | undefined;
      for (let i = 1; i <= WRITES && refused === undefined; i++) {
        const t = performance.now();
        const outcome = await writeVersion(request(server.url(shape), `sha256-${shape}-${i}`));
        // A tip over the transport's bound is refused (memory stays bounded): said, not an error.
        if (outcome.outcome === 'Failed' && outcome.reason === 'GitUnsupported') refused = outcome.message;
        else if (outcome.outcome !== 'Committed') throw new Error(`write ${i}: ${JSON.stringify(outcome)}`);
        else times.push(performance.now() - t);
      }
      if (refused !== undefined) console.log(`  refused: ${refused}`);
      else {
        const t = performance.now();
        const again = await writeVersion(request(server.url(shape), `sha256-${shape}-${WRITES}`));
        const unchanged = performance.now() - t;
        console.log(
          `  commit latency: median ${median(times).toFixed(0)} ms of ${WRITES} writes (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}); already written: ${unchanged.toFixed(0)} ms (${again.outcome})`,
        );
      }
      const child = await childWrite(server.url(shape), `sha256-${shape}-child`);
      console.log(
        `  one write in a child process: ${child.outcome} in ${child.ms.toFixed(0)} ms, peak RSS ${mib(child.maxRssKb * 1024)}`,
      );
    }
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
