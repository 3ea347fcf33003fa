// Counts the Markdown states against what it lists and what the code has: "three X (a, b, c)" and
// "three X:" over a bullet list name as many items as they say; "both charts" or "three charts"
// is the number of charts a release publishes (scripts/release/versions.ts), and the release page's
// table of what a release publishes has a row for each of them.
import { describe, expect, it } from 'vitest';
import { CHARTS } from '../../../scripts/release/versions.ts';
import { proseLines, readRepoFile, repoFiles, sectionRows } from '../../support/fixtures/markdown.ts';

const NUMBERS: Record<string, number> = {
  both: 2,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
const NUMBER = `\\b(${Object.keys(NUMBERS).join('|')})`;

/** Items of a parenthesized list, or undefined when the parentheses hold a remark, not a list. */
function listItems(inner: string): string[] | undefined {
  if (!inner.includes(',')) return undefined;
  const items = inner.split(/,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+/).filter((i) => i.trim() !== '');
  return items.every((i) => i.trim().split(/\s+/).length <= 3) ? items : undefined;
}

/** Each count of a page that differs from what follows it, as `line: "phrase" says N, lists M`. */
function miscounts(text: string): string[] {
  const lines = proseLines(text);
  const found: string[] = [];
  lines.forEach(({ line, text: l }, i) => {
    for (const m of l.matchAll(new RegExp(`${NUMBER} ([a-z-]+(?: [a-z-]+){0,2}) \\(([^()]+)\\)`, 'gi'))) {
      const items = listItems(m[3] ?? '');
      const said = NUMBERS[(m[1] ?? '').toLowerCase()];
      if (items && items.length !== said)
        found.push(`${line}: "${m[0]}" says ${said}, lists ${items.length}`);
    }
    const intro = new RegExp(`${NUMBER} [a-z-]+(?: [a-z-]+){0,3}:\\s*$`, 'i').exec(l);
    if (!intro) return;
    // The bullets right after the line (a blank line between allowed), continuation lines indented.
    let bullets = 0;
    for (const next of lines.slice(i + 1)) {
      if (/^[-*] /.test(next.text)) bullets++;
      else if (next.text.trim() !== '' && !/^\s/.test(next.text)) break;
      else if (next.text.trim() === '' && bullets > 0) break;
    }
    const said = NUMBERS[(intro[1] ?? '').toLowerCase()];
    if (bullets > 0 && bullets !== said)
      found.push(`${line}: "${intro[0].trim()}" says ${said}, lists ${bullets}`);
  });
  return found;
}

/** The number of charts each "both charts" / "three charts" of a page says. */
function chartCounts(text: string): { line: number; said: number }[] {
  return proseLines(text).flatMap(({ line, text: l }) =>
    [...l.matchAll(new RegExp(`${NUMBER} (?:Helm )?charts\\b`, 'gi'))].map((m) => ({
      line,
      said: NUMBERS[(m[1] ?? '').toLowerCase()] ?? 0,
    })),
  );
}

const MARKDOWN = repoFiles(/\.md$/);

describe('counts in the Markdown', () => {
  it.each(MARKDOWN)('%s: each "N things (…)" or "N things:" lists N', (file) => {
    expect(miscounts(readRepoFile(file)).map((why) => `${file}:${why}`)).toEqual([]);
  });

  it.each(MARKDOWN)('%s: "N charts" is the number of charts a release publishes', (file) => {
    const wrong = chartCounts(readRepoFile(file)).filter(({ said }) => said !== CHARTS.length);
    expect(wrong.map(({ line, said }) => `${file}:${line} says ${said} charts`)).toEqual([]);
  });

  it('docs/release.md lists every chart a release publishes, in the registry and as a package', () => {
    const rows = sectionRows(readRepoFile('docs/release.md'), 'What a release publishes');
    const pushed = rows.flatMap((row) =>
      [...(row[1] ?? '').matchAll(/oci:\/\/REGISTRY\/PATH\/([\w-]+)/g)].map((m) => m[1]),
    );
    expect(pushed.sort()).toEqual([...CHARTS].sort());
    const packages = rows.find((row) => row[0] === 'chart packages')?.[1] ?? '';
    const names = /static-export-\{([^}]+)\}-X\.tgz/.exec(packages)?.[1]?.split(',') ?? [];
    expect(names.map((n) => `static-export-${n}`).sort()).toEqual([...CHARTS].sort());
  });

  it('reports a count that differs from its list', () => {
    expect(miscounts('where the three charts (operator, site) go')).toEqual([
      '1: "three charts (operator, site)" says 3, lists 2',
    ]);
    expect(miscounts('three goals are missed:\n\n- one\n- two\n  more of two\n\nAfter.')).toEqual([
      '1: "three goals are missed:" says 3, lists 2',
    ]);
    expect(miscounts('two CRDs (upgraded with the chart)')).toEqual([]);
    expect(chartCounts('the image and both charts')).toEqual([{ line: 1, said: 2 }]);
  });
});
