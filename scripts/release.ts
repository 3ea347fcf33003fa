// `npm run release -- --to oci://REGISTRY/PATH --sign-key cosign.key [--out DIR] [--plain-http]`:
// publishes the version in package.json (docs/release.md). Into --out: the npm tarball, the single
// executable, the kubectl plugin's archive and krew manifest, the chart packages, the list of images
// the charts run, SHA256SUMS and a .sig per file; to the registry: the image and the charts
// (operator, site, simulator), each signed there.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { builtImage, imageToolsMissing } from './image/built.ts';
import { publishChart } from './release/charts.ts';
import { writeChecksums } from './release/checksums.ts';
import { assertSigningKey, type Signer, signArtifact, signBlob } from './release/cosign.ts';
import { ReleaseError } from './release/errors.ts';
import { buildExecutable } from './release/executable.ts';
import { pushImage } from './release/image.ts';
import { writeImageList } from './release/images.ts';
import { writeKrewPlugin } from './release/krew.ts';
import { parseReleaseArgs, type ReleaseOptions } from './release/options.ts';
import { assertRegistryReachable } from './release/registry.ts';
import { findTools, runTool } from './release/tools.ts';
import { CHARTS, IMAGE_NAME, releaseVersion } from './release/versions.ts';

const ROOT = resolve(import.meta.dirname, '..');
const step = (text: string) => process.stderr.write(`release: ${text}\n`);

/** What a release writes into --out (an interrupted one too). */
const RELEASE_FILE = /^(static-export-.*|SHA256SUMS(\.sig)?|charts|plugins|\.stage)$/;

/** A ReleaseError unless `out` is new or holds only an earlier release's files: it is emptied later. */
function assertOutReplaceable(out: string): void {
  if (existsSync(out) && !readdirSync(out).every((name) => RELEASE_FILE.test(name))) {
    throw new ReleaseError(`--out ${out} holds files of no earlier release; name a new or empty directory`);
  }
}

async function release(options: ReleaseOptions): Promise<void> {
  const version = releaseVersion(ROOT);
  assertSigningKey(options.signKey);
  const tools = await findTools(ROOT);
  const cannotBuildImage = imageToolsMissing();
  if (cannotBuildImage) throw new ReleaseError(`the image cannot be built here: ${cannotBuildImage}`);
  const out = resolve(options.out);
  assertOutReplaceable(out);
  await assertRegistryReachable(options.to, options.plainHttp);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'charts'), { recursive: true });
  const signer: Signer = { cosign: tools.cosign, key: options.signKey, plainHttp: options.plainHttp };

  step(`building static-export ${version}`);
  const executable = await buildExecutable(ROOT, version, out);
  const plugin = await writeKrewPlugin(ROOT, version, executable, out);
  // npm's prepack builds dist/; node_modules/.bin first, so that build runs on the project's Node 24.
  const path = `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`;
  await runTool('npm pack', tools.npm, ['pack', '--pack-destination', out], {
    cwd: ROOT,
    env: { ...process.env, PATH: path },
  });
  const tarball = join(out, `static-export-operator-${version}.tgz`);
  const image = await builtImage().catch((error: { stderr?: string; message: string }) => {
    const lines = (error.stderr ?? error.message).trim().split('\n');
    throw new ReleaseError(`building the image (npm run image) failed: ${lines.at(-1)}`);
  });

  const imageRepository = `${options.to.repository}/${IMAGE_NAME}`;
  const imageDigest = await pushImage(tools.skopeo, image, imageRepository, options.plainHttp);
  await signArtifact(signer, `${imageRepository}@${imageDigest}`);
  step(`pushed and signed ${imageRepository}:${version}@${imageDigest}`);

  const chartFiles: string[] = [];
  const images: string[] = [];
  const stageDir = join(out, '.stage');
  for (const name of CHARTS) {
    const chart = await publishChart({
      helm: tools.helm,
      root: ROOT,
      name,
      version,
      imageRepository,
      stageDir,
      outDir: join(out, 'charts'),
      repository: options.to.repository,
      plainHttp: options.plainHttp,
    });
    await signArtifact(signer, `${options.to.repository}/${name}@${chart.digest}`);
    chartFiles.push(chart.file);
    images.push(...chart.images);
    step(`pushed and signed oci://${options.to.repository}/${name} ${version}@${chart.digest}`);
  }
  rmSync(stageDir, { recursive: true, force: true });
  const imageList = writeImageList(out, version, images);

  const files = [tarball, executable, plugin.archive, plugin.manifest, ...chartFiles, imageList];
  const sums = await writeChecksums(out, files);
  for (const file of [...files, sums]) await signBlob(signer, file);
  step(`signed the files and SHA256SUMS in ${out}`);
}

try {
  await release(parseReleaseArgs(process.argv.slice(2)));
} catch (error) {
  if (!(error instanceof ReleaseError)) throw error;
  process.stderr.write(`release: ${error.message}\n`);
  process.exitCode = 1;
}
