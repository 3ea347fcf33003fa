// The operator image (scripts/image/build.sh's OCI layout) copied to the release repository.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from './tools.ts';

/** Copies the layout's `tag` to `repository`:`tag`; returns the pushed manifest's digest. */
export async function pushImage(
  skopeo: string,
  image: { layout: string; tag: string },
  repository: string,
  plainHttp: boolean,
): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'static-export-image-'));
  try {
    const digestFile = join(work, 'digest');
    await runTool(`pushing the image to ${repository}`, skopeo, [
      'copy',
      '--quiet',
      '--digestfile',
      digestFile,
      ...(plainHttp ? ['--dest-tls-verify=false'] : []),
      `oci:${image.layout}:${image.tag}`,
      `docker://${repository}:${image.tag}`,
    ]);
    return readFileSync(digestFile, 'utf8').trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
