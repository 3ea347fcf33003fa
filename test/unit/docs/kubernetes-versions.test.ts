// The Kubernetes versions the project claims, against the versions its test control planes are built
// at (scripts/control-plane/versions.env): each chart's kubeVersion admits the oldest tested minor and
// nothing older, docs/install.md's table lists exactly the tested builds and, for the oldest, the test
// files .ci/run runs against it, and every "Kubernetes ≥ X" in the Markdown says the same minimum.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubeVersions, TEST_KUBE_VERSION_ENV } from '../../../scripts/control-plane/kube-versions.ts';
import {
  codeSpans,
  proseLines,
  REPO,
  readRepoFile,
  repoFiles,
  sectionRows,
} from '../../support/fixtures/markdown.ts';

const { current, oldest } = kubeVersions();
/** v1.27.16 -> 1.27, as kubeVersion and the pages name a minimum. */
const minor = (version: string) => version.replace(/^v/, '').split('.').slice(0, 2).join('.');
const SECTION = 'Kubernetes versions';

/** The test files .ci/run runs against the oldest version (continued lines joined). */
function ciOldestFiles(script: string): string[] {
  const line = script
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .find((l) => l.includes(`${TEST_KUBE_VERSION_ENV}=$KUBERNETES_OLDEST_VERSION`));
  return [...(line ?? '').matchAll(/test\/\S+\.test\.ts/g)].map((m) => m[0]);
}

/** Each "Kubernetes ≥ X" (or >=) the text states, with X. */
function minimumClaims(text: string): string[] {
  return proseLines(text).flatMap(({ text: l }) =>
    [...l.matchAll(/Kubernetes (?:≥|>=) ?(\d+\.\d+)/g)].map((m) => m[1] ?? ''),
  );
}

describe('the Kubernetes versions claimed and tested', () => {
  it.each(repoFiles(/^charts\/[^/]+\/Chart\.yaml$/))('%s admits the oldest tested minor and up', (file) => {
    const chart = parse(readRepoFile(file)) as { kubeVersion?: string };
    expect(chart.kubeVersion).toBe(`>=${minor(oldest)}.0-0`);
  });

  it('docs/install.md lists exactly the versions the control planes are built at, and says the minimum', () => {
    const text = readRepoFile('docs/install.md');
    const rows = sectionRows(text, SECTION);
    expect(rows.map((r) => codeSpans(r[0] ?? '')[0]).sort()).toEqual([current, oldest].sort());
    expect(text).toContain(`kubeVersion: ">=${minor(oldest)}.0-0"`);
  });

  it('names, for the oldest version, the test files .ci/run runs against it', () => {
    const files = ciOldestFiles(readFileSync(join(REPO, '.ci/run'), 'utf8'));
    expect(files.length).toBeGreaterThan(0);
    const row = sectionRows(readRepoFile('docs/install.md'), SECTION).find(
      (r) => codeSpans(r[0] ?? '')[0] === oldest,
    );
    const named = codeSpans(row?.at(-1) ?? '').filter((s) => /^test\/.*\.test\.ts$/.test(s));
    expect(named.sort()).toEqual(files.sort());
    for (const file of files) expect(repoFiles(/\.test\.ts$/)).toContain(file);
  });

  it.each(repoFiles(/\.md$/).filter((f) => f !== 'CHANGELOG.md'))('%s states the tested minimum', (file) => {
    for (const claim of minimumClaims(readRepoFile(file))) expect(claim).toBe(minor(oldest));
  });

  it('finds a stated minimum and the files a CI line runs', () => {
    expect(
      minimumClaims('Helm 4; Kubernetes ≥ 1.26.\n```\nKubernetes >= 1.20\n```\nKubernetes >=1.25'),
    ).toEqual(['1.26', '1.25']);
    expect(
      ciOldestFiles(
        `npm test\n${TEST_KUBE_VERSION_ENV}=$KUBERNETES_OLDEST_VERSION npx vitest run \\\n  test/integration/a.test.ts test/integration/b.test.ts\n`,
      ),
    ).toEqual(['test/integration/a.test.ts', 'test/integration/b.test.ts']);
  });
});
