// `npm run generate`: writes crds/*.yaml from the zod schemas in src/crd/, and the operator
// chart's CRD templates from them.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderCrdFiles } from '../src/crd/manifests.ts';
import { CHART_CRD_DIR, chartCrdTemplate } from './chart-crds.ts';

const root = resolve(import.meta.dirname, '..');
const files = renderCrdFiles();
const outputs: [string, Record<string, string>][] = [
  ['crds', files],
  [
    CHART_CRD_DIR,
    Object.fromEntries(Object.entries(files).map(([name, text]) => [name, chartCrdTemplate(name, text)])),
  ],
];
for (const [relDir, contents] of outputs) {
  const dir = join(root, relDir);
  mkdirSync(dir, { recursive: true });
  for (const stale of readdirSync(dir)) if (!(stale in contents)) rmSync(join(dir, stale));
  for (const [name, text] of Object.entries(contents)) writeFileSync(join(dir, name), text);
  console.log(`wrote ${Object.keys(contents).length} CRDs to ${relDir}/`);
}
