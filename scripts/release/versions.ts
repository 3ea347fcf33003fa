// The version lives in package.json; the charts must agree with it, so a release never publishes a
// chart whose version, appVersion (the default image tag) or Artifact Hub image differs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ReleaseError } from './errors.ts';

/** The operator's, the site's, and the simulator's (for trying the quickstart without an account). */
export const CHARTS = ['static-export-operator', 'static-export-site', 'static-export-simulator'] as const;

const PackageJson = z.object({ version: z.string().min(1) });
const ChartYaml = z.object({
  version: z.string(),
  appVersion: z.string(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const IMAGE_NAME = 'static-export';

/** The images an Artifact Hub `artifacthub.io/images` annotation lists; undefined when it is malformed. */
export function annotatedImages(
  annotation: string | undefined,
): { name: string; image: string }[] | undefined {
  const images = z
    .array(z.object({ name: z.string(), image: z.string().min(1) }))
    .safeParse(parse(annotation ?? '[]'));
  return images.success ? images.data : undefined;
}

/** The static-export image an Artifact Hub `artifacthub.io/images` annotation lists. */
export function annotatedImage(annotation: string | undefined): string | undefined {
  return annotatedImages(annotation)?.find((i) => i.name === IMAGE_NAME)?.image;
}

/** package.json's version; a ReleaseError naming the file and field to fix when a chart disagrees. */
export function releaseVersion(root: string): string {
  const { version } = PackageJson.parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
  const problems: string[] = [];
  for (const chart of CHARTS) {
    const file = `charts/${chart}/Chart.yaml`;
    const meta = ChartYaml.parse(parse(readFileSync(join(root, file), 'utf8')));
    const wrong = [
      meta.version !== version && `version is ${meta.version}`,
      meta.appVersion !== version && `appVersion is ${meta.appVersion}`,
      annotatedImage(meta.annotations?.['artifacthub.io/images'])?.endsWith(`:${version}`) === false &&
        'the artifacthub.io/images static-export tag differs',
    ].filter((p) => typeof p === 'string');
    if (wrong.length > 0) problems.push(`${file}: ${wrong.join(', ')}`);
  }
  if (problems.length > 0) {
    throw new ReleaseError(
      `version mismatch with package.json (${version}): ${problems.join('; ')}; set them to ${version} (package.json holds the version)`,
    );
  }
  return version;
}
