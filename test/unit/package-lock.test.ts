// `npm ci` on a fresh clone, on any platform: npm refuses a lock that misses an optional package of
// another platform (e.g. one of biome's per-platform binaries). npm's own check, without installing.
import { type ExecFileException, execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
// The environment without the configuration of the npm command that started the tests: `npm run -s
// test:unit` passes on npm_config_loglevel=silent, and npm ci then prints nothing at all.
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name))),
  PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
};

it('package-lock.json is complete enough for npm ci', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lock-test-'));
  try {
    for (const file of ['package.json', 'package-lock.json'])
      await copyFile(join(ROOT, file), join(dir, file));
    const ci = await promisify(execFile)(
      'npm',
      ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
      { cwd: dir, env },
    ).then(
      (done) => ({ ...done, exit: 0 as number | string }),
      // What npm said and how it ended, for the failure message.
      (error: ExecFileException & { stdout: string; stderr: string }) => ({
        stdout: error.stdout,
        stderr: error.stderr,
        exit: error.code ?? error.signal ?? 'unknown',
      }),
    );
    const said = `npm ci exited ${ci.exit}; its stderr:\n${ci.stderr}\nits stdout:\n${ci.stdout.slice(0, 2000)}`;
    expect(ci.exit, said).toBe(0);
    expect(ci.stderr, said).not.toMatch(/npm error/);
    expect(ci.stdout, said).toContain('add @biomejs/biome');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
