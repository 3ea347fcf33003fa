// What a new user copies from the pages: the platform's real admin API base URL (in the form the
// flags and spec.apiBaseUrl take), credentials that never stand on a command line, and the current
// export API (spec.projectId) as the path the install pages take.
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { PLATFORM_API_BASE_URL, versionedBaseUrlRefusal } from '../../../src/api-base-url.ts';
import { RELEASE_MANIFEST } from '../../support/cluster/quickstart.ts';
import { registeredMetricNames } from '../../support/fixtures/doc-facts.ts';
import { readRepoFile, repoFiles } from '../../support/fixtures/markdown.ts';

/** Every page, chart README and NOTES, and example a user copies commands from. */
const COPIED = repoFiles(
  /^(README\.md|docs\/.*\.md|charts\/[^/]+\/(README\.md|templates\/NOTES\.txt)|examples\/.*\.ya?ml)$/,
).filter(
  // Dated benchmark entries record what was run then.
  (f) => !f.startsWith('docs/benchmarks/'),
);

describe('the admin API base URL the pages give', () => {
  it('is the platform’s, without the /v1 the client adds (the form the flags and CRDs accept)', () => {
    expect(PLATFORM_API_BASE_URL).toBe('https://api.mintlify.com');
    expect(versionedBaseUrlRefusal(PLATFORM_API_BASE_URL, 'x')).toBeUndefined();
    expect(versionedBaseUrlRefusal(`${PLATFORM_API_BASE_URL}/v1`, 'x')).toMatch(/must not end in \/v1/);
  });

  it.each(['README.md', 'docs/install.md', 'docs/production.md'])(
    '%s names it where a user sets operator.apiBaseUrl',
    (page) => {
      const text = readRepoFile(page);
      expect(text).toMatch(/apiBaseUrl[=:] ?https:\/\/api\.mintlify\.com(\s|$)/m);
      expect(text).not.toMatch(/apiBaseUrl[=:] ?https:\/\/api\.example\.com/);
    },
  );

  it('is never given with a version anywhere a user copies from', () => {
    const versioned = COPIED.filter((f) => /api\.mintlify\.com\/v\d/.test(readRepoFile(f)));
    // install.md says the platform's reference shows /v1 and that it is left out.
    expect(versioned).toEqual([]);
  });
});

describe('credentials in commands', () => {
  it('are read from a file or standard input, never given with --from-literal (process listings, shell history)', () => {
    const literal = COPIED.flatMap((f) =>
      [...readRepoFile(f).matchAll(/--from-literal=([\w.-]+)=/g)]
        // A user name is no credential.
        .filter((m) => m[1] !== 'username')
        .map((m) => `${f}: --from-literal=${m[1]}=`),
    );
    expect(literal).toEqual([]);
  });

  it('drop the line break a paste ends with, which the key check refuses', () => {
    const stdin = COPIED.flatMap((f) =>
      readRepoFile(f)
        // A command continued on the next line (in a YAML comment too) is one line.
        .replace(/\\\n[#\s]*/g, ' ')
        .split('\n')
        .filter((l) => l.includes('=/dev/stdin'))
        .map((l) => [f, l] as const),
    );
    expect(stdin.length).toBeGreaterThanOrEqual(8);
    for (const [file, line] of stdin) expect(`${file}: ${line}`).toMatch(/tr -d '\\n' \| kubectl /);
  });
});

describe('the install path', () => {
  it('examples/static-export-release.yaml names a project (the current API), its domain only commented', () => {
    const text = readRepoFile('examples/static-export-release.yaml');
    const spec = (parse(text) as { spec: Record<string, unknown> }).spec;
    expect(spec.projectId).toMatch(/^[0-9a-f]{24}$/);
    expect(spec.domain).toBeUndefined();
    expect(text).toMatch(/^ {2}# domain: /m);
  });

  it.each([
    ['the quickstart', readRepoFile('docs/quickstart.md')],
    ["README's quickstart", readRepoFile('README.md')],
    ['the quickstart test', RELEASE_MANIFEST],
  ])('%s applies a release by spec.projectId', (_what, text) => {
    const releases = [...text.matchAll(/kind: StaticExportRelease\n[\s\S]*?(?=\nEOF|\n```|$)/g)].flatMap(
      (m) =>
        parseAllDocuments(`apiVersion: x\n${m[0]}`).map(
          (d) => d.toJS() as { spec?: Record<string, unknown> },
        ),
    );
    expect(releases.length).toBeGreaterThan(0);
    for (const r of releases) {
      expect(r.spec?.projectId).toBe('docs');
      expect(r.spec?.domain).toBeUndefined();
    }
  });

  it.each([
    'README.md',
    'docs/install.md',
    'charts/static-export-operator/README.md',
    'charts/static-export-operator/templates/NOTES.txt',
  ])('%s has the example release edited for its project id', (page) => {
    const text = readRepoFile(page);
    expect(text).toMatch(/spec\.projectId/);
    expect(text).not.toMatch(/(edit|set) (its )?spec\.domain/);
  });

  it('the simulator chart serves the current API by default', () => {
    const values = parse(readRepoFile('charts/static-export-simulator/values.yaml')) as {
      apiRevision: number;
    };
    expect(values.apiRevision).toBe(2);
  });
});

describe('the CLI before its first use', () => {
  const pages = repoFiles(/^(README\.md|docs\/[^/]+\.md)$/).filter((f) => f !== 'docs/cli.md');

  it('every block that runs static-export check offers helm test, which needs no CLI', () => {
    const without = pages.flatMap((f) =>
      [...readRepoFile(f).matchAll(/```sh\n([\s\S]*?)```/g)]
        .map((m) => m[1] ?? '')
        .filter((block) => /^static-export check\b/m.test(block) && !block.includes('helm test'))
        .map((block) => `${f}: ${block.split('\n')[0]}`),
    );
    expect(without).toEqual([]);
  });

  it('install.md says how to get the CLI before its first static-export check', () => {
    const page = readRepoFile('docs/install.md');
    const firstRun = page.indexOf('\nstatic-export check');
    expect(firstRun).toBeGreaterThan(0);
    expect(page.slice(0, firstRun)).toMatch(/npm install -g \.\/static-export-operator-<version>\.tgz/);
    expect(page.slice(0, firstRun)).toContain('](cli.md#install-the-cli)');
  });
});

describe('versions and the CHANGELOG', () => {
  it('every metric a page calls removed is under a Removed heading of the CHANGELOG, and no longer served', () => {
    const removed = repoFiles(/^docs\/[^/]+\.md$/).flatMap((f) =>
      [...readRepoFile(f).matchAll(/Removed[^\n]*?the metric `([a-z_]+)`/g)].map((m) => m[1] ?? ''),
    );
    expect(removed).toContain('static_export_link_expiry_seconds');
    const changelog = readRepoFile('CHANGELOG.md');
    const removedSections = [...changelog.matchAll(/### Removed\n([\s\S]*?)(?=\n##)/g)]
      .map((m) => m[1])
      .join('\n');
    for (const metric of removed) {
      expect(removedSections).toContain(`\`${metric}\``);
      expect(registeredMetricNames()).not.toContain(metric);
    }
  });

  it('release.md installs a published release by a variable and says Unreleased features are in none yet', () => {
    const page = readRepoFile('docs/release.md');
    const install = page.slice(page.indexOf('## Installing a release'), page.indexOf('## How the single'));
    expect(install).toContain('**Unreleased**');
    expect(install).not.toMatch(/--version \d|:\d+\.\d+\.\d+|-\d+\.\d+\.\d+[.-]/);
  });
});

describe('set-up facts', () => {
  const goMin = /^GO_MIN_VERSION=(\S+)$/m.exec(readRepoFile('scripts/go-version.sh'))?.[1];

  it.each(['README.md', 'docs/development.md'])(
    '%s states the Go the build scripts require, and Linux x86-64',
    (page) => {
      const text = readRepoFile(page).replace(/\s+/g, ' ');
      expect(goMin).toMatch(/^1\.\d+$/);
      expect(text).toContain(`Go ${goMin} or later`);
      expect(text).toContain('Linux x86-64');
    },
  );

  it('every dependency with an install script is reviewed in allowScripts (npm lists unreviewed ones)', () => {
    const lock = JSON.parse(readRepoFile('package-lock.json')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    const pkg = JSON.parse(readRepoFile('package.json')) as { allowScripts: Record<string, boolean> };
    expect(Object.keys(pkg.allowScripts).sort()).toEqual([...new Set(withScripts)].sort());
  });
});

describe('the base URL rule, written once', () => {
  it("is the operator chart's too (the pattern of src/api-base-url.ts, verbatim)", async () => {
    const { VERSIONED_URL_PATTERN } = await import('../../../src/api-base-url.ts');
    expect(readRepoFile('charts/static-export-operator/templates/deployment.yaml')).toContain(
      `regexMatch "${VERSIONED_URL_PATTERN}" $url`,
    );
  });
});
