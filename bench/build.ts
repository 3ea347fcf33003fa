// The CLI as shipped (compiled JS, like dist/), which benchmarks run: the .ts sources would add
// Node's type-stripping compiler (tens of MiB) to the measured RSS.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
// Inside this checkout, not node_modules/.cache: worktrees that share one node_modules must not
// overwrite each other's build mid-run.
export const BUILD = join(ROOT, '.bench-build');
export const CLI = join(BUILD, 'cli/main.js');

/** Compiles src/ into BUILD; emits even when files elsewhere in the tree have type errors. */
export async function buildCli(): Promise<string> {
  await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), [
    '-p',
    join(ROOT, 'tsconfig.build.json'),
    '--outDir',
    BUILD,
  ]).catch(() => undefined);
  return CLI;
}
