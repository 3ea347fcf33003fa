import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { renderValuesYaml, type StaticExportValues } from '../targets/values.ts';
import { usageError } from './exit-codes.ts';

/** The site chart's `staticExport` block, ready for `helm upgrade -f`. */
export function valuesYaml(values: StaticExportValues & { expiresAt?: Date }): string {
  const header = [
    '# staticExport values for the static-export-site chart (helm upgrade -f).',
    '# bundleUrl is a credential: keep this file private.',
    ...(values.expiresAt ? [`# The link expires at ${values.expiresAt.toISOString()}.`] : []),
  ];
  return `${header.join('\n')}\n${renderValuesYaml(values)}`;
}

/** Checked before an export starts, so a bad --values-out does not waste it. */
export async function checkValuesPath(path: string): Promise<void> {
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw usageError(`--values-out ${path} is a directory: name a file, e.g. ${path}/values.yaml.`);
  }
  const dir = dirname(path);
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError(
      code === 'ENOENT'
        ? `--values-out ${path}: directory ${dir} does not exist; create it first.`
        : `--values-out ${path}: directory ${dir} is not writable (${code}).`,
    );
  }
}

/** Written owner-only and renamed into place, so readers never see a partial file. */
export async function writeValuesFile(path: string, yaml: string): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, yaml, { mode: 0o600 });
    await rename(tmp, path);
  } catch (error) {
    // The temporary file holds the link: never leave it behind.
    await rm(tmp, { force: true });
    throw error;
  }
}
