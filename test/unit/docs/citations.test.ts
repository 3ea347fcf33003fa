// Comments, docs and chart files that cite a README section ("README, \"Footprint\"", "the chart's
// README, *RBAC*") or a docs page and anchor ("docs/operations.md#alerts") name one that exists:
// a moved or renamed section fails here instead of leaving readers at a dead end.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headings, REPO, readRepoFile, repoFiles } from '../../support/fixtures/markdown.ts';

/** The files whose comments and text may cite docs: sources, tests, scripts, charts, examples, docs. */
const FILES = repoFiles(/^(src|scripts|test|bench|charts|examples|docs|\.ci)\/|^[^/]+\.md$|^Dockerfile$/)
  // These tests' own examples of stale citations.
  .filter((f) => !f.startsWith('test/unit/docs/') && !/\.(png|jpe?g|gz|tar|ico)$/.test(f));

/** A section cited as README[.md][, or 's] "Name" / *Name* / (README, Name), with the README's path if given. */
const README_CITATION =
  /((?:charts\/[\w-]+\/)?README)(?:\.md)?`?(?:'s)?,?\s+(?:"([^"\n]+)"|\*([^*\n]+(?:\n[^*\n]+)?)\*)|\((README)(?:\.md)?, ([A-Z][^)"*,\n]*)\)/g;
/** A docs page, optionally with an anchor. */
const DOC_CITATION = /(?<![\w/.])(docs\/[\w./-]+\.md)(?:#([\w-]+))?/g;

const titles = (path: string) =>
  existsSync(join(REPO, path))
    ? headings(readRepoFile(path)).map((h) => h.title.replace(/`/g, '').toLowerCase())
    : [];
const anchors = (path: string) => headings(readRepoFile(path)).map((h) => h.anchor);

/** The citations in `text` (the contents of `file`) that name no existing section, page or anchor. */
export function staleCitations(file: string, text: string): string[] {
  const stale: string[] = [];
  for (const m of text.matchAll(README_CITATION)) {
    const [, path, quoted, emphasised, , bare] = m;
    // A name wrapped onto the next line of a comment: without the comment's marker.
    const section = (quoted ?? emphasised ?? bare ?? '').replace(/\s*\n\s*(?:\/\/|#|\*)?\s*/g, ' ').trim();
    const chart = /^charts\/[\w-]+\//.exec(file)?.[0];
    // A chart's files mean their chart's README unless they say which; anything else the project's.
    const candidates = path?.startsWith('charts/')
      ? [`${path}.md`]
      : chart
        ? [`${chart}README.md`, 'README.md']
        : ['README.md'];
    if (!candidates.some((readme) => titles(readme).includes(section.toLowerCase())))
      stale.push(`${file}: ${m[0].trim()} (no such section in ${candidates.join(' or ')})`);
  }
  for (const m of text.matchAll(DOC_CITATION)) {
    const [cited, page = '', anchor] = m;
    if (!existsSync(join(REPO, page))) stale.push(`${file}: ${cited} (no such page)`);
    else if (anchor && !anchors(page).includes(anchor)) stale.push(`${file}: ${cited} (no such heading)`);
  }
  return stale;
}

describe('citations of README sections and docs pages', () => {
  it('every one names a section, page and anchor that exist', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(FILES.flatMap((f) => staleCitations(f, readRepoFile(f)))).toEqual([]);
  });

  it('a section, page or anchor that does not exist is reported', () => {
    expect(
      staleCitations(
        'src/http.ts',
        '// memory (README, "Footprint"); see docs/operations.md#nope, docs/gone.md and docs/cli.md#exit-codes\n' +
          "// (see the README's *Container\n// image*)",
      ),
    ).toEqual([
      'src/http.ts: README, "Footprint" (no such section in README.md)',
      "src/http.ts: README's *Container\n// image* (no such section in README.md)",
      'src/http.ts: docs/operations.md#nope (no such heading)',
      'src/http.ts: docs/gone.md (no such page)',
    ]);
    expect(staleCitations('charts/static-export-operator/values.yaml', '# (README, Benchmarks)')).toEqual([
      'charts/static-export-operator/values.yaml: (README, Benchmarks) (no such section in charts/static-export-operator/README.md or README.md)',
    ]);
    expect(staleCitations('charts/static-export-operator/values.yaml', '# README.md, "RBAC", says')).toEqual(
      [],
    );
  });
});
