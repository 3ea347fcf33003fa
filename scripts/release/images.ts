// DIR/static-export-X-images.txt: every image the released charts run, one per line, so a platform
// team can copy them into its air gap's registry before installing with global.imageRegistry.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ReleaseError } from './errors.ts';
import { annotatedImages } from './versions.ts';

/** The images the chart at `dir` lists (its artifacthub.io/images annotation, which tests keep equal to what it renders). */
export function chartImages(dir: string): string[] {
  const file = join(dir, 'Chart.yaml');
  const meta = parse(readFileSync(file, 'utf8')) as { annotations?: Record<string, string> };
  const images = annotatedImages(meta.annotations?.['artifacthub.io/images']);
  if (images === undefined || images.length === 0) {
    throw new ReleaseError(
      `${file}: the artifacthub.io/images annotation lists no images; list each as {name, image}`,
    );
  }
  return images.map((i) => i.image);
}

/** Writes the images (each once, sorted) into `out`; returns the file's path. */
export function writeImageList(out: string, version: string, images: string[]): string {
  const file = join(out, `static-export-${version}-images.txt`);
  writeFileSync(file, `${[...new Set(images)].sort().join('\n')}\n`);
  return file;
}
