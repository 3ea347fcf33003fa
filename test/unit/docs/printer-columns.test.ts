// What the Markdown says `kubectl get` shows for the custom resources, against the CRDs' printer
// columns: a column of priority 1 appears only with `-o wide`, so a page that names one beside a
// `kubectl get` of its kind must say `-o wide`; a page that lists the columns lists all of them,
// the priority-0 ones before `-o wide` and the others after it.
import { describe, expect, it } from 'vitest';
import { CRD_DEFINITIONS } from '../../../src/crd/manifests.ts';
import { codeSpans, readRepoFile, repoFiles } from '../../support/fixtures/markdown.ts';

const KINDS = CRD_DEFINITIONS.map((def) => ({
  names: [def.plural, def.singular, ...def.shortNames],
  columns: def.printerColumns,
}));

const WIDE = /(?:-o|--output)[ =]?wide\b/;
/** An output format without columns: what such a command prints names fields, not columns. */
const FIELDS = /(?:-o|--output)[ =]?(?:jsonpath|json|yaml|name|custom-columns|go-template)\b/;

/**
 * The units a claim about `kubectl get` output lives in: each paragraph of prose (consecutive
 * non-blank lines) and each line of a fenced code block (a command with its comment).
 */
function units(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  let paragraph: { line: number; text: string } | undefined;
  const flush = () => {
    if (paragraph) out.push(paragraph);
    paragraph = undefined;
  };
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || fence === marker)) {
      flush();
      fence = fence === undefined ? marker : undefined;
    } else if (fence !== undefined) {
      out.push({ line: i + 1, text: line });
    } else if (line.trim() === '') {
      flush();
    } else if (paragraph) {
      paragraph.text += `\n${line}`;
    } else {
      paragraph = { line: i + 1, text: line };
    }
  });
  flush();
  return out;
}

const word = (w: string, flags = '') => new RegExp(`(?<![\\w-])${w}(?![\\w-])`, flags);

/** What is wrong with one unit of text about `kubectl get` output, for each kind it gets. */
function problems(unit: string): string[] {
  // A code span (or a code block's line) that prints fields is not about columns.
  const text = unit.replace(/`[^`\n]*`/g, (span) => (FIELDS.test(span) ? '' : span));
  if (FIELDS.test(text) || !/\bkubectl\b/.test(text) || !/\bget\b/.test(text)) return [];
  const found: string[] = [];
  for (const kind of KINDS) {
    if (!kind.names.some((n) => word(n).test(text))) continue;
    const wide = kind.columns.filter((c) => (c.priority ?? 0) > 0);
    const named = wide.filter((c) => word(c.name, 'i').test(text));
    if (named.length > 0 && !WIDE.test(text)) {
      found.push(`names ${named.map((c) => c.name).join(', ')} without -o wide`);
    }
    // A list of the columns as kubectl heads them: `READY`, `STATUS`, …
    const listed = codeSpans(text).filter((s) => kind.columns.some((c) => c.name.toUpperCase() === s));
    if (listed.length === 0) continue;
    const missing = kind.columns.filter((c) => !listed.includes(c.name.toUpperCase()));
    if (missing.length > 0) found.push(`lists the columns without ${missing.map((c) => c.name).join(', ')}`);
    const wideAt = text.search(WIDE);
    for (const c of kind.columns) {
      const at = text.indexOf(`\`${c.name.toUpperCase()}\``);
      if (at < 0) continue;
      const afterWide = wideAt >= 0 && at > wideAt;
      if (afterWide !== (c.priority ?? 0) > 0) {
        found.push(`lists ${c.name.toUpperCase()} ${afterWide ? 'after' : 'before'} -o wide`);
      }
    }
  }
  return found;
}

describe('kubectl get output in the Markdown', () => {
  it.each(repoFiles(/\.md$/))('%s: priority-1 columns only with -o wide, column lists complete', (file) => {
    const found = units(readRepoFile(file)).flatMap(({ line, text }) =>
      problems(text).map((why) => `${file}:${line} ${why}`),
    );
    expect(found).toEqual([]);
  });

  it('reports a wide column shown without -o wide, and an incomplete or misordered list', () => {
    expect(problems('kubectl -n docs get ser docs -w   # Ready, with Version and Renewal')).toEqual([
      'names Version, Renewal without -o wide',
    ]);
    expect(problems('kubectl -n docs get ser docs -o wide -w   # Version and Renewal')).toEqual([]);
    expect(problems('`kubectl get aj` shows `READY`, `STATUS`, `AGE`; `-o wide` adds `STATE`')).toEqual([
      'lists the columns without PR',
    ]);
    expect(problems('`kubectl get aj` shows `READY`, `STATUS`, `AGE`, `STATE`; `-o wide` adds `PR`')).toEqual(
      ['lists STATE before -o wide'],
    );
    expect(problems('kubectl get pods shows the version')).toEqual([]);
    expect(problems("kubectl -n docs get ser docs -o jsonpath='{.status.current.version}'")).toEqual([]);
    expect(
      problems(
        "`kubectl get ser docs -o jsonpath='{.status.current.version}'`; `kubectl get ser` has Version",
      ),
    ).toEqual(['names Version without -o wide']);
  });
});
