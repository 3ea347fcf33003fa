// docs/cli.md against the CLI's own commander definitions (the program built as `completion` builds
// it, every command loaded): a section per command, and in it a table row per flag, written exactly
// as the flag is declared. Both ways: nothing missing, nothing documented that the CLI does not have.
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.ts';
import { cliProgram } from '../../support/fixtures/doc-facts.ts';
import { codeSpans, headings, readRepoFile, sectionRows } from '../../support/fixtures/markdown.ts';

const PAGE = readRepoFile('docs/cli.md');

/** Every command, depth first, as the words typed after `static-export` ([] for the program). */
function commands(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [
    { path, command },
    ...command.commands.filter((c) => c.name() !== 'help').flatMap((c) => commands(c, [...path, c.name()])),
  ];
}

const title = (path: string[]) => `\`${['static-export', ...path].join(' ')}\``;

let all: { path: string[]; command: Command }[];

beforeAll(async () => {
  all = commands(await cliProgram());
});

describe('docs/cli.md', () => {
  it('has a section for every command, and for no other', () => {
    const documented = headings(PAGE)
      .map((h) => h.title)
      .filter((t) => t.startsWith('`static-export'));
    expect(documented.sort()).toEqual(all.map((c) => title(c.path)).sort());
  });

  it("lists every visible flag of each command as declared, and no other, in the command's section", () => {
    for (const { path, command } of all) {
      const declared = command.options.filter((o) => o.long && !o.hidden).map((o) => o.flags);
      const documented = sectionRows(PAGE, title(path)).map((row) => codeSpans(row[0] ?? '')[0] ?? '');
      expect(documented.sort(), `flags in the section ${title(path)}`).toEqual(declared.sort());
    }
  });

  it('lists every exit code, and no other', () => {
    const documented = sectionRows(PAGE, 'Exit codes').map((row) => Number(codeSpans(row[0] ?? '')[0]));
    expect(documented).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });
});

describe('docs/cli.md defaults', () => {
  it("are the ones each command's --help shows (a size as 2GiB, not its bytes)", () => {
    const differ: string[] = [];
    for (const { path, command } of all) {
      const rows = sectionRows(PAGE, title(path));
      for (const o of command.options.filter((x) => x.long && !x.hidden && x.defaultValue !== undefined)) {
        const row = rows.find((r) => codeSpans(r[0] ?? '')[0] === o.flags);
        const documented = codeSpans(row?.[1] ?? '')[0];
        if (documented === undefined) continue;
        const shown = o.defaultValueDescription ?? String(o.defaultValue);
        if (shown !== documented)
          differ.push(`${title(path)} ${o.long}: --help ${shown}, docs ${documented}`);
      }
    }
    expect(differ).toEqual([]);
  });
});
