// Every relative link in the repository's Markdown (README.md, the charts' READMEs, docs/, the sample
// docs) leads to a file that exists and, with an anchor, to a heading in it (anchors as GitHub makes
// them). docs/ is also served as a site of its own (the demo exports it through the simulator): its
// pages link only to each other or to https URLs, each starts with a title, and the docs home (and
// the README's Documentation table) link every page.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  headings,
  links,
  REPO,
  readRepoFile,
  repoFiles,
  sectionRows,
} from '../../support/fixtures/markdown.ts';

const DOCS = join(REPO, 'docs');

const MARKDOWN = repoFiles(/\.md$/);
const DOC_PAGES = MARKDOWN.filter((f) => f.startsWith('docs/'));

/** What is wrong with a relative link from `file` (repository path), or undefined when it resolves. */
function broken(file: string, target: string): string | undefined {
  if (/^[a-z]+:/i.test(target)) return undefined;
  const [path = '', anchor] = target.split('#');
  const resolved = path ? join(dirname(join(REPO, file)), decodeURIComponent(path)) : join(REPO, file);
  if (!existsSync(resolved)) return `${relative(REPO, resolved)} does not exist`;
  if (anchor === undefined || statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return undefined;
  const anchors = headings(readRepoFile(relative(REPO, resolved))).map((h) => h.anchor);
  return anchors.includes(anchor) ? undefined : `${relative(REPO, resolved)} has no heading #${anchor}`;
}

describe('relative links', () => {
  it.each(MARKDOWN)('%s: each leads to an existing file and heading', (file) => {
    const problems = links(readRepoFile(file)).flatMap(({ line, target }) => {
      const why = broken(file, target);
      return why ? [`${file}:${line} ${target}: ${why}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it('a link to a missing heading or file is reported', () => {
    expect(broken('docs/index.md', 'cli.md#no-such-heading')).toBe(
      'docs/cli.md has no heading #no-such-heading',
    );
    expect(broken('docs/index.md', 'missing.md')).toBe('docs/missing.md does not exist');
    expect(broken('docs/index.md', 'cli.md#static-export-fetch')).toBeUndefined();
  });
});

describe('docs/ as a site', () => {
  it.each(DOC_PAGES)('%s links only within docs/ (or to https URLs)', (file) => {
    const outside = links(readRepoFile(file))
      .filter(({ target }) => !/^https:\/\//.test(target) && !target.startsWith('#'))
      .filter(
        ({ target }) =>
          /^[a-z]+:/i.test(target) ||
          relative(DOCS, join(dirname(join(REPO, file)), target.split('#')[0] ?? '')).startsWith('..'),
      )
      .map(({ line, target }) => `${file}:${line} ${target}`);
    expect(outside).toEqual([]);
  });

  it.each(DOC_PAGES)('%s starts with a # title', (file) => {
    expect(readRepoFile(file)).toMatch(/^# \S/);
  });

  it("the README's Documentation table links every page but the dated benchmark entries", () => {
    const linked = new Set(
      sectionRows(readRepoFile('README.md'), 'Documentation').flatMap((row) =>
        links(row[0] ?? '').map(({ target }) => target.split('#')[0] ?? ''),
      ),
    );
    const pages = DOC_PAGES.filter((p) => !/^docs\/benchmarks\/(?!index\.md$)/.test(p));
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });

  it('the docs home links every page', () => {
    const linked = new Set(
      links(readRepoFile('docs/index.md')).map(({ target }) => join('docs', target.split('#')[0] ?? '')),
    );
    expect(DOC_PAGES.filter((p) => p !== 'docs/index.md' && !linked.has(p))).toEqual([]);
  });
});
