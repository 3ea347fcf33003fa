// A Secret volume laid out as the kubelet writes it: each key a symlink through `..data` to a
// timestamped directory, and an update a new directory then an atomic rename of `..data`.
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

let generation = 0;

/**
 * Writes `files` as the Secret's content under `dir` (created or updated, like the kubelet). A key
 * written before and missing now is left a dangling link: reading it fails with ENOENT.
 */
export async function writeSecretVolume(dir: string, files: Record<string, string>): Promise<void> {
  const data = `..${Date.now()}_${++generation}`;
  await mkdir(join(dir, data), { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, data, name), content);
  await symlink(data, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const name of Object.keys(files))
    await symlink(join('..data', name), join(dir, name)).catch(ignoreExists);
}

function ignoreExists(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EEXIST') throw error;
}
