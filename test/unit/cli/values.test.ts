import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { writeValuesFile } from '../../../src/cli/values.ts';

let work: string;
afterAll(() => rm(work, { recursive: true, force: true }));

it('leaves no temporary file holding the link when the values file cannot be put in place', async () => {
  work = await mkdtemp(join(tmpdir(), 'values-test-'));
  // A directory appearing at the path after the up-front check: the rename fails.
  const target = join(work, 'values.yaml');
  await mkdir(target);
  await expect(writeValuesFile(target, 'bundleUrl: https://h.example/b?sig=abc123\n')).rejects.toThrow();
  expect(await readdir(work)).toEqual(['values.yaml']);
});
