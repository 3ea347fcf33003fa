// A section starts with a sentence: the first paragraph under a heading does not open with a plain
// lower-case word, the mark of text cut at its start (a name such as `static-export-operator` may).
// A paragraph after a code block may continue the sentence before it, so only headings count.
import { describe, expect, it } from 'vitest';
import { proseLines, readRepoFile, repoFiles } from '../../support/fixtures/markdown.ts';

/** The first line of each section whose paragraph opens mid-sentence, as `line: text`. */
function cutStarts(text: string): string[] {
  const found: string[] = [];
  let underHeading = false;
  for (const { line, text: l } of proseLines(text)) {
    if (/^#{1,6}\s/.test(l)) underHeading = true;
    else if (underHeading && l.trim() !== '') {
      if (/^[a-z]+(?![\w./_-])/.test(l)) found.push(`${line}: ${l}`);
      underHeading = false;
    }
  }
  return found;
}

describe('sections in the Markdown', () => {
  it.each(repoFiles(/\.md$/))('%s: each section starts with a whole sentence', (file) => {
    expect(cutStarts(readRepoFile(file)).map((why) => `${file}:${why}`)).toEqual([]);
  });

  it('reports a section whose text starts mid-sentence, not one starting with a name', () => {
    expect(cutStarts('## Where admin keys go\n\nwas started with: `--api-base-url`')).toEqual([
      '3: was started with: `--api-base-url`',
    ]);
    expect(cutStarts('# Concepts\n\nstatic-export-operator keeps sites serving')).toEqual([]);
  });
});
