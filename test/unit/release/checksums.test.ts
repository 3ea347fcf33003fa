// SHA256SUMS is what `sha256sum -c` checks: it passes on the files and fails on a changed one.
import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { writeChecksums } from '../../../scripts/release/checksums.ts';

const dir = mkdtempSync(join(tmpdir(), 'release-sums-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('lists every file relative to the list, and sha256sum -c checks them', async () => {
  mkdirSync(join(dir, 'charts'));
  const files = [join(dir, 'cli.tgz'), join(dir, 'charts/chart-0.1.0.tgz')];
  writeFileSync(files[0] as string, 'npm tarball');
  writeFileSync(files[1] as string, 'chart package');
  const list = await writeChecksums(dir, files);
  expect(readFileSync(list, 'utf8')).toMatch(
    /^[0-9a-f]{64} {2}cli\.tgz\n[0-9a-f]{64} {2}charts\/chart-0\.1\.0\.tgz\n$/,
  );
  const check = () => promisify(execFile)('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir });
  await expect(check()).resolves.toMatchObject({ stdout: 'cli.tgz: OK\ncharts/chart-0.1.0.tgz: OK\n' });

  appendFileSync(files[1] as string, '!');
  await expect(check()).rejects.toMatchObject({
    stdout: expect.stringContaining('charts/chart-0.1.0.tgz: FAILED'),
  });
});
