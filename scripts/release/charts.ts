// Both charts as OCI artifacts, packaged from a copy whose default image is the released one, so
// `helm install oci://REGISTRY/PATH/<chart> --version X` pulls the image published beside it.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseDocument, stringify } from 'yaml';
import { ReleaseError } from './errors.ts';
import { chartImages } from './images.ts';
import { runTool } from './tools.ts';
import { IMAGE_NAME } from './versions.ts';

/** Rewrites the copy at `dir`: values' image.repository and the Artifact Hub image annotation. */
export function pointChartAt(dir: string, imageRepository: string, version: string): void {
  const valuesFile = join(dir, 'values.yaml');
  const values = parseDocument(readFileSync(valuesFile, 'utf8'));
  if (!values.hasIn(['image', 'repository']))
    throw new ReleaseError(`${valuesFile}: image.repository is missing; the released image cannot be set`);
  values.setIn(['image', 'repository'], imageRepository);
  writeFileSync(valuesFile, values.toString());

  const chartFile = join(dir, 'Chart.yaml');
  const chart = parseDocument(readFileSync(chartFile, 'utf8'));
  const annotation = chart.getIn(['annotations', 'artifacthub.io/images']);
  if (typeof annotation === 'string') {
    const images = (parse(annotation) as { name: string; image: string }[]).map((i) =>
      i.name === IMAGE_NAME ? { ...i, image: `${imageRepository}:${version}` } : i,
    );
    chart.setIn(['annotations', 'artifacthub.io/images'], stringify(images));
    writeFileSync(chartFile, chart.toString());
  }
}

/**
 * Packages `charts/<name>` (pointed at `imageRepository`) into `outDir` and pushes it under
 * oci://`repository`; returns the pushed chart's path, digest and the images it runs.
 */
export async function publishChart(o: {
  helm: string;
  root: string;
  name: string;
  version: string;
  imageRepository: string;
  stageDir: string;
  outDir: string;
  repository: string;
  plainHttp: boolean;
}): Promise<{ file: string; digest: string; images: string[] }> {
  const copy = join(o.stageDir, o.name);
  cpSync(join(o.root, 'charts', o.name), copy, { recursive: true });
  pointChartAt(copy, o.imageRepository, o.version);
  await runTool(`helm package ${o.name}`, o.helm, ['package', copy, '--destination', o.outDir]);
  const file = join(o.outDir, `${o.name}-${o.version}.tgz`);
  const pushed = await runTool(`helm push ${o.name}`, o.helm, [
    'push',
    file,
    `oci://${o.repository}`,
    ...(o.plainHttp ? ['--plain-http'] : []),
  ]);
  const digest = /Digest: (sha256:[0-9a-f]{64})/.exec(pushed)?.[1];
  if (digest === undefined) throw new ReleaseError(`helm push ${o.name} printed no digest: ${pushed.trim()}`);
  return { file, digest, images: chartImages(copy) };
}
