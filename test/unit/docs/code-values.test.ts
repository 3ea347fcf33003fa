// Durations and limits the Markdown states in prose, against the constants the code uses: the
// shutdown drain and the platform's hourly export starts. Each claim is found by the wording the
// pages use for it, wherever it is (docs/, the README, the charts' READMEs; not the CHANGELOG, whose
// older entries may state what was true then).
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_DRAIN_MS } from '../../../src/cli/commands/operator.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../../src/project.ts';
import { proseLines, readRepoFile, repoFiles } from '../../support/fixtures/markdown.ts';

interface Claim {
  what: string;
  /** Finds the claim in a paragraph; the first group that matched is the stated value. */
  pattern: RegExp;
  value: number;
}

const CLAIMS: Claim[] = [
  {
    what: 'the shutdown drain (s)',
    pattern: /\b(\d+) s drain\b|\bdrains? [^.]*?\bfor (\d+) s\b/g,
    value: SHUTDOWN_DRAIN_MS / 1000,
  },
  {
    what: 'export starts per hour',
    pattern: /\b(\d+) (?:export )?starts per (?:organization|key)\b[^.]*?\bhour\b/g,
    value: EXPORT_STARTS_PER_HOUR,
  },
];

/** The paragraphs of a page's prose (lines rewrapped, so a claim may span lines), with their first line. */
function paragraphs(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let previous = -1;
  for (const { line, text: l } of proseLines(text)) {
    const last = out.at(-1);
    if (l.trim() === '') previous = -1;
    else if (last && previous === line - 1) last.text += ` ${l.trim()}`;
    else out.push({ line, text: l.trim() });
    if (l.trim() !== '') previous = line;
  }
  return out;
}

/** Each stated value that differs from the code's, as `what: stated (code: value)`. */
function contradictions(text: string): string[] {
  return CLAIMS.flatMap(({ what, pattern, value }) =>
    [...text.matchAll(pattern)]
      .map((m) => Number(m.slice(1).find((g) => g !== undefined)))
      .filter((stated) => stated !== value)
      .map((stated) => `${what}: ${stated} (code: ${value})`),
  );
}

describe('durations and limits in the Markdown', () => {
  it.each(repoFiles(/\.md$/).filter((f) => f !== 'CHANGELOG.md'))(
    '%s states the values the code uses',
    (file) => {
      const found = paragraphs(readRepoFile(file)).flatMap(({ line, text }) =>
        contradictions(text).map((why) => `${file}:${line} ${why}`),
      );
      expect(found).toEqual([]);
    },
  );

  it('reports a value that differs from the code, across a line break too', () => {
    expect(contradictions('On SIGTERM a wait for a slot ends at the 30 s drain.')).toEqual([
      `the shutdown drain (s): 30 (code: ${SHUTDOWN_DRAIN_MS / 1000})`,
    ]);
    const [wrapped] = paragraphs('the operator drains in-flight reconciles\nfor 31 s and releases the Lease');
    expect(contradictions(wrapped?.text ?? '')).toEqual([
      `the shutdown drain (s): 31 (code: ${SHUTDOWN_DRAIN_MS / 1000})`,
    ]);
    expect(contradictions('the platform allows 12 starts per organization and hour')).toEqual([
      `export starts per hour: 12 (code: ${EXPORT_STARTS_PER_HOUR})`,
    ]);
    expect(contradictions(`ends at the ${SHUTDOWN_DRAIN_MS / 1000} s drain`)).toEqual([]);
  });
});
