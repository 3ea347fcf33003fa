// Reading the project's Markdown as GitHub renders it: headings and their anchors, links, and the
// rows of a table, all outside fenced code blocks. The docs tests check pages against the code with it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO = join(import.meta.dirname, '../..');

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/** The lines of a Markdown text outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** A heading's anchor as GitHub makes it: text without markup, lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every heading of a Markdown text with its anchor (repeated headings get -1, -2, … as on GitHub). */
export function headings(text: string): { level: number; title: string; anchor: string }[] {
  const seen = new Map<string, number>();
  return proseLines(text).flatMap(({ text: line }) => {
    const m = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) return [];
    const base = slug(m[2] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return [{ level: (m[1] ?? '').length, title: m[2] ?? '', anchor: n === 0 ? base : `${base}-${n}` }];
  });
}

/** The targets of the inline links and images of a Markdown text, with their lines. */
export function links(text: string): { line: number; target: string }[] {
  return proseLines(text).flatMap(({ line, text: l }) =>
    // Inline code may hold brackets that are not links.
    [...l.replace(/`[^`]*`/g, '``').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({
      line,
      target: m[1] ?? '',
    })),
  );
}

/**
 * The rows of every table in the section under the heading whose title is `title` (down to the next
 * heading of the same or a higher level), each row as its cells.
 */
export function sectionRows(text: string, title: string): string[][] {
  const lines = proseLines(text).map((l) => l.text);
  const start = lines.findIndex((l) => new RegExp(`^#{1,6}\\s+${escapeRegExp(title)}\\s*$`).test(l));
  if (start < 0) throw new Error(`no heading "${title}"`);
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 1;
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    const h = /^(#+)\s/.exec(line);
    if (h && (h[1] ?? '').length <= level) break;
    if (!line.startsWith('|')) continue;
    // The separator under a header: the row before it was the header, not data.
    if (/^\|[-:| ]+\|$/.test(line)) rows.pop();
    else rows.push(cells(line));
  }
  return rows;
}

/** A table row's cells, `\|` kept inside a cell. */
function cells(row: string): string[] {
  return row
    .slice(1, row.endsWith('|') ? -1 : undefined)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The code spans of a cell, e.g. ["-n, --namespace <ns>"]. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
}

/** The repository's files (tracked, or new and not ignored) whose path matches `pattern`. */
export function repoFiles(pattern: RegExp): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => pattern.test(f) && existsSync(join(REPO, f)));
}

/** The shell commands of a text's fenced code blocks, continuation lines joined, comments dropped. */
export function shellCommands(text: string): string[] {
  const out: string[] = [];
  let inShell = false;
  let pending = '';
  for (const line of text.split('\n')) {
    const fence = /^\s*```(\w*)/.exec(line);
    if (fence) {
      inShell = !inShell && /^(sh|bash|shell)$/.test(fence[1] ?? '');
      continue;
    }
    if (!inShell) continue;
    const code = line.replace(/\s#.*$/, '');
    pending += code.replace(/\\\s*$/, ' ');
    if (!/\\\s*$/.test(code)) {
      if (pending.trim() !== '') out.push(pending.trim().replace(/\s+/g, ' '));
      pending = '';
    }
  }
  return out;
}
