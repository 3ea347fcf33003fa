import { randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { renderValuesYaml, type StaticExportValues } from '../targets/values.ts';

/** The site chart's `staticExport` block, ready for `helm upgrade -f`. */
export function valuesYaml(values: StaticExportValues & { expiresAt?: Date }): string {
  const header = [
    '# staticExport values for the static-export-site chart (helm upgrade -f).',
    '# bundleUrl is a credential: keep this file private.',
    ...(values.expiresAt ? [`# The link expires at ${values.expiresAt.toISOString()}.`] : []),
  ];
  return `${header.join('\n')}\n${renderValuesYaml(values)}`;
}

/** Written owner-only and renamed into place, so readers never see a partial file. */
export async function writeValuesFile(path: string, yaml: string): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, yaml, { mode: 0o600 });
  await rename(tmp, path);
}
