// `npm run generate`: writes crds/*.yaml from the zod schemas in src/crd/.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderCrdFiles } from '../src/crd/index.ts';

const dir = resolve(import.meta.dirname, '..', 'crds');
mkdirSync(dir, { recursive: true });
const files = renderCrdFiles();
for (const stale of readdirSync(dir)) if (!(stale in files)) rmSync(join(dir, stale));
for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
console.log(`wrote ${Object.keys(files).length} CRDs to crds/`);
