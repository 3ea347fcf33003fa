// SHA256SUMS in the format `sha256sum -c SHA256SUMS` checks: "<hex>  <path relative to the list>".
import { createHash } from 'node:crypto';
import { createReadStream, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Writes `dir`/SHA256SUMS over `files` (paths under `dir`); returns its path. */
export async function writeChecksums(dir: string, files: string[]): Promise<string> {
  const lines: string[] = [];
  for (const file of files) lines.push(`${await sha256(file)}  ${relative(dir, file)}`);
  const list = join(dir, 'SHA256SUMS');
  writeFileSync(list, `${lines.join('\n')}\n`);
  return list;
}
