import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeDownloadLeftovers } from '../../../src/controllers/static-export-release/reconciler.ts';

describe('removeDownloadLeftovers', () => {
  it("removes a killed process's unfinished downloads and nothing else in the work directory", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'leftovers-'));
    const download = '3f2b1c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d-0a1b2c3d';
    await mkdir(join(dir, download));
    await writeFile(join(dir, download, 'index.html'), 'x');
    await mkdir(join(dir, `.${download}.tmp-9f8e7d6c`));
    await mkdir(join(dir, `.${download}.old-1a2b3c4d`));
    await writeFile(join(dir, 'notes.txt'), 'keep');
    await mkdir(join(dir, 'site'));

    expect((await removeDownloadLeftovers(dir)).sort()).toEqual(
      [download, `.${download}.old-1a2b3c4d`, `.${download}.tmp-9f8e7d6c`].sort(),
    );
    expect((await readdir(dir)).sort()).toEqual(['notes.txt', 'site']);
  });

  it('accepts a work directory that does not exist yet', async () => {
    expect(await removeDownloadLeftovers(join(tmpdir(), 'no-such-work-dir-for-leftovers'))).toEqual([]);
  });
});
