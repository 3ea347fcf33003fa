// `npm run image -- <dir>` replaces the OCI layout directory as a whole: it must refuse to delete
// anything but a layout it wrote (marker beside oci-layout), an empty directory or nothing. The
// refusal comes before the build: on a PATH without buildah, a directory it accepts ends at the
// "buildah is required" check instead, untouched.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cluster/kube.ts';
import { tempDir } from '../../support/temp.ts';

const BUILD = join(ROOT, 'scripts', 'image', 'build.sh');

/** A PATH with bash and dirname only: no buildah, so nothing is ever built. */
function bareBin(): string {
  const bin = tempDir('build-path-');
  for (const program of ['bash', 'dirname']) {
    const found = spawnSync('sh', ['-c', `command -v ${program}`])
      .stdout.toString()
      .trim();
    symlinkSync(found, join(bin, program));
  }
  return bin;
}

function build(out: string) {
  const r = spawnSync(BUILD, [out], { env: { PATH: bareBin() }, encoding: 'utf8' });
  return { code: r.status, stderr: r.stderr };
}

describe('npm run image -- <dir>', () => {
  it('refuses a directory holding other files, keeping them', () => {
    const out = tempDir('image-out-');
    writeFileSync(join(out, 'thesis.tex'), 'years of work\n');
    const r = build(out);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `image: ${out} holds files that are not an OCI layout this script wrote (no .static-export-image beside oci-layout; it holds thesis.tex): not replaced.`,
    );
    expect(readFileSync(join(out, 'thesis.tex'), 'utf8')).toBe('years of work\n');
  });

  it('refuses an OCI layout it did not write, a file and a symbolic link', () => {
    const layout = tempDir('image-layout-');
    writeFileSync(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
    writeFileSync(join(layout, 'index.json'), '{}');
    mkdirSync(join(layout, 'blobs'));
    expect(build(layout).code).toBe(2);
    expect(existsSync(join(layout, 'index.json'))).toBe(true);

    const file = join(tempDir('image-file-'), 'notes.txt');
    writeFileSync(file, 'keep\n');
    const onFile = build(file);
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toContain(`image: ${file} exists and is not a directory`);

    const link = join(tempDir('image-link-'), 'oci');
    symlinkSync(layout, link);
    const onLink = build(link);
    expect(onLink.code).toBe(2);
    expect(onLink.stderr).toContain(`image: ${link} is a symbolic link`);
    expect(existsSync(join(layout, 'oci-layout'))).toBe(true);
  });

  it('accepts an empty directory, a new path and a layout it wrote (they reach the build)', () => {
    const written = tempDir('image-ours-');
    writeFileSync(join(written, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
    writeFileSync(join(written, '.static-export-image'), 'Written by npm run image\n');
    for (const out of [tempDir('image-empty-'), join(tempDir('image-new-'), 'oci'), written]) {
      const r = build(out);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('image: buildah is required');
    }
  });
});
