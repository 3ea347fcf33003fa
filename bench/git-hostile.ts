// Git write-back against repositories built to cost a client memory (issue 39), each written once
// by a fresh Node process running the compiled engine, as the operator runs it: its outcome and
// peak RSS. The attacks as the issue measured them (a 192 MiB zero-filled file, a hand-made delta
// pack building 256 MiB, 100,000 small files, 32 MB of refs) and the largest repositories each
// bound still admits (what a write may cost at most). STATIC_EXPORT_BENCH_BASELINE=<dir> also runs
// them against another compilation of src/ (an older commit's `tsc -p tsconfig.build.json`).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  deltaBombRepo,
  manyFilesRepo,
  manyRefsRepo,
  zeroFilledRepo,
} from '../test/support/fixtures/git-packs.ts';
import { GitServer, runGit } from '../test/support/servers/git-server.ts';
import { buildCli } from './build.ts';
import { childWrite, idleChild, mib, PASSWORD, USER } from './git-write-back.ts';

const MIB = 1024 * 1024;

/** A tip whose one directory lists `entries` names of one small file: tree bytes, few objects. */
function wideTreeRepo(server: GitServer, name: string, entries: number): void {
  manyFilesRepo(server, name, 1);
  const bare = server.gitDir(name);
  const blob = runGit(['hash-object', '-w', '--stdin'], { cwd: bare, input: 'same\n' }).trim();
  const lines = [
    `100644 blob ${runGit(['rev-parse', 'main:deploy/values.yaml'], { cwd: bare }).trim()}\tvalues.yaml`,
  ];
  for (let i = 0; i < entries; i++)
    lines.push(`100644 blob ${blob}\tfile-${String(i).padStart(8, '0')}.yaml`);
  const wide = runGit(['mktree'], {
    cwd: bare,
    input: `${lines.sort((a, b) => (a.split('\t')[1] ?? '').localeCompare(b.split('\t')[1] ?? '')).join('\n')}\n`,
  }).trim();
  const deploy = runGit(['mktree'], { cwd: bare, input: `040000 tree ${wide}\tdeploy\n` }).trim();
  const commit = runGit(['commit-tree', deploy, '-m', 'wide'], { cwd: bare }).trim();
  runGit(['update-ref', 'refs/heads/main', commit], { cwd: bare });
}

/** Every bound at once, just under it: many files, a large file, many refs. */
function everyBoundRepo(server: GitServer, name: string): void {
  manyFilesRepo(server, name, 9_500);
  const bare = server.gitDir(name);
  const env = { GIT_DIR: bare, GIT_INDEX_FILE: join(server.root, `${name}.every-index`) };
  const zeros = runGit(['hash-object', '-w', '--stdin'], { env, input: Buffer.alloc(28 * MIB) }).trim();
  runGit(['read-tree', 'refs/heads/main'], { env });
  runGit(['update-index', '--add', '--cacheinfo', `100644,${zeros},assets/zeros.bin`], { env });
  const tree = runGit(['write-tree'], { env }).trim();
  const commit = runGit(['commit-tree', tree, '-p', 'refs/heads/main', '-m', 'every bound'], { env }).trim();
  runGit(['update-ref', 'refs/heads/main', commit], { env });
  const lines = ['# pack-refs with: peeled fully-peeled sorted'];
  for (let i = 0; i < 55_000; i++) lines.push(`${commit} refs/heads/branch-${String(i).padStart(8, '0')}`);
  writeFileSync(join(bare, 'packed-refs'), `${lines.join('\n')}\n`);
}

const CASES: [string, (server: GitServer, name: string) => void][] = [
  ['192 MiB zero-filled file', (s, n) => zeroFilledRepo(s, n, 192 * MIB)],
  ['hand-made delta pack building 256 MiB', (s, n) => void deltaBombRepo(s, n, 4096)],
  ['100,000 small files', (s, n) => manyFilesRepo(s, n, 100_000)],
  ['32 MB of refs (460,000 branches)', (s, n) => manyRefsRepo(s, n, 460_000)],
  ['within the bounds: 31 MiB zero-filled file', (s, n) => zeroFilledRepo(s, n, 31 * MIB)],
  ['within the bounds: 9,900 small files', (s, n) => manyFilesRepo(s, n, 9_900)],
  ['within the bounds: 55,000 branches (3.9 MB of refs)', (s, n) => manyRefsRepo(s, n, 55_000)],
  ['within the bounds: one directory of 40,000 names (1.9 MiB tree)', (s, n) => wideTreeRepo(s, n, 40_000)],
  ['within every bound at once: 9,500 files, a 28 MiB file, 55,000 branches', everyBoundRepo],
];

export async function run(): Promise<void> {
  await buildCli();
  const baseline = process.env.STATIC_EXPORT_BENCH_BASELINE;
  const root = mkdtempSync(join(tmpdir(), 'git-hostile-bench-'));
  const server = await new GitServer(root, { username: USER, password: PASSWORD }).start();
  try {
    console.log(`child process with the engine loaded, no write: peak RSS ${mib(await idleChild())}`);
    for (const [i, [title, build]] of CASES.entries()) {
      const name = `case-${i}`;
      const started = performance.now();
      build(server, name);
      const url = server.url(name);
      console.log(`${title} (built in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
      for (const [label, dir] of [
        ['this commit', undefined],
        ...(baseline ? [['baseline', baseline]] : []),
      ] as const) {
        try {
          const child = await childWrite(url, `sha256-${i}-${label.length}`, dir);
          console.log(
            `  ${label}: ${child.outcome} in ${child.ms.toFixed(0)} ms, peak RSS ${mib(child.maxRssKb * 1024)}`,
          );
        } catch (error) {
          // The baseline may die of it: that is a figure too.
          console.log(
            `  ${label}: the process failed (${String((error as Error).message)
              .split('\n')[0]
              ?.slice(0, 160)})`,
          );
        }
      }
      rmSync(server.gitDir(name), { recursive: true, force: true });
    }
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
