// `npm ci` on a fresh clone, on any platform: npm refuses a lock that misses an optional package of
// another platform (e.g. one of biome's per-platform binaries). npm's own check, without installing.
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

it('package-lock.json is complete enough for npm ci', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lock-test-'));
  try {
    for (const file of ['package.json', 'package-lock.json'])
      await copyFile(join(ROOT, file), join(dir, file));
    const ci = await promisify(execFile)(
      'npm',
      ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
      { cwd: dir, env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` } },
    ).catch((error: { stderr: string }) => ({ stdout: '', stderr: error.stderr }));
    expect(ci.stderr).not.toMatch(/npm error/);
    expect(ci.stdout).toContain('add @biomejs/biome');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
