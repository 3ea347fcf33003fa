// The version lives in package.json; a chart that disagrees stops the release, naming the file.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReleaseError } from '../../../scripts/release/errors.ts';
import { CHARTS, releaseVersion } from '../../../scripts/release/versions.ts';

const ROOT = join(import.meta.dirname, '../../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A root with the repository's package.json and Chart.yaml files, each passed through `edit`. */
function copyOfRepo(edit: (file: string, text: string) => string = (_, text) => text): string {
  const root = mkdtempSync(join(tmpdir(), 'release-versions-'));
  roots.push(root);
  for (const file of ['package.json', ...CHARTS.map((c) => `charts/${c}/Chart.yaml`)]) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    cpSync(join(ROOT, file), join(root, file));
    writeFileSync(join(root, file), edit(file, readFileSync(join(root, file), 'utf8')));
  }
  return root;
}

const refusal = (root: string): string => {
  try {
    releaseVersion(root);
  } catch (error) {
    expect(error).toBeInstanceOf(ReleaseError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('releaseVersion', () => {
  it("is package.json's version, with which the repository's charts agree", () => {
    expect(releaseVersion(ROOT)).toBe(VERSION);
    expect(releaseVersion(copyOfRepo())).toBe(VERSION);
  });

  it('names the chart file and field that disagree, and the version to set', () => {
    const root = copyOfRepo((file, text) =>
      file === 'charts/static-export-site/Chart.yaml'
        ? text.replace(/^version: .*$/m, 'version: 9.9.9')
        : text,
    );
    expect(refusal(root)).toBe(
      `version mismatch with package.json (${VERSION}): charts/static-export-site/Chart.yaml: version is 9.9.9; set them to ${VERSION} (package.json holds the version)`,
    );
  });

  it('after a bump of package.json alone, names every chart: version, appVersion and the Artifact Hub image tag', () => {
    const root = copyOfRepo((file, text) =>
      file === 'package.json' ? text.replace(`"version": "${VERSION}"`, '"version": "1.0.0"') : text,
    );
    const message = refusal(root);
    for (const chart of CHARTS) {
      expect(message).toContain(
        `charts/${chart}/Chart.yaml: version is ${VERSION}, appVersion is ${VERSION}, the artifacthub.io/images static-export tag differs`,
      );
    }
    expect(message).toMatch(/set them to 1\.0\.0 \(package\.json holds the version\)$/);
    expect(message).not.toContain('\n');
  });
});
