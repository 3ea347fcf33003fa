// The Markdown the simulator exports, a GitHub-flavoured subset without a dependency: headings with
// GitHub's ids (so `page.md#some-heading` links land), paragraphs, nested lists, tables, fenced
// code, quotes, rules, inline code, emphasis, links and images. Links to `*.md` files become the
// extensionless URLs of the exported pages, as in the vendor's exports.

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function unescapeHtml(html: string): string {
  return html
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** `guides/install.md#x` -> `guides/install#x`; `index.md` -> `./`; external links unchanged. */
function rewriteHref(href: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) return href;
  const hashAt = href.indexOf('#');
  const path = hashAt === -1 ? href : href.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : href.slice(hashAt);
  if (!path.endsWith('.md')) return href;
  let out = path.slice(0, -'.md'.length);
  if (out === 'index' || out.endsWith('/index')) out = out.slice(0, -'index'.length) || './';
  return out + hash;
}

/**
 * A heading's id as GitHub gives it: lower case, punctuation dropped, each space a hyphen; a
 * repeated id gets `-1`, `-2`… in order. `seen` counts the ids of one page.
 */
function githubSlug(text: string, seen: Map<string, number>): string {
  const base = text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replaceAll(' ', '-');
  const count = seen.get(base);
  seen.set(base, (count ?? -1) + 1);
  return count === undefined ? base : `${base}-${count + 1}`;
}

// Code spans, links and images (a label may hold code spans), and autolinks, in one pass so that
// neither is read inside the other.
const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|(!?)\[((?:[^[\]`\\]|\\.|`[^`]*`)*)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+"([^"]*)")?\s*\)|<((?:https?|mailto):[^\s<>]+)>/g;

/** Text outside code spans and links: HTML escaped, backslash-escaped punctuation kept literal. */
function renderText(text: string): string {
  return text
    .split(/(\\[!-/:-@[-`{-~])/)
    .map((part, i) => (i % 2 ? `&#${part.codePointAt(1)};` : escapeHtml(part)))
    .join('');
}

/** Bold and italics, which may wrap code spans and links (kept as placeholders meanwhile). */
function emphasis(html: string): string {
  return html
    .replace(/\*\*(\S(?:.*?\S)?)\*\*/g, '<strong>$1</strong>')
    .replace(/(?<![\w])__(\S(?:.*?\S)?)__(?![\w])/g, '<strong>$1</strong>')
    .replace(/\*(\S(?:.*?\S)?)\*/g, '<em>$1</em>')
    .replace(/(?<![\w])_(\S(?:.*?\S)?)_(?![\w])/g, '<em>$1</em>');
}

function renderInline(text: string): string {
  const tokens: string[] = [];
  // A placeholder (private-use characters around a number) holds nothing emphasis reads.
  const hold = (html: string) => `\uE000${tokens.push(html) - 1}\uE000`;
  let out = '';
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    out += renderText(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [, ticks, code, bang, label, href, title, autolink] = m;
    const titled = title === undefined ? '' : ` title="${escapeHtml(title)}"`;
    if (ticks !== undefined && code !== undefined) {
      const trimmed = /^ .* $/s.test(code) && code.trim() !== '' ? code.slice(1, -1) : code;
      out += hold(`<code>${escapeHtml(trimmed.replaceAll('\n', ' '))}</code>`);
    } else if (autolink !== undefined) {
      out += hold(`<a href="${escapeHtml(autolink)}">${escapeHtml(autolink)}</a>`);
    } else if (bang) {
      out += hold(`<img src="${escapeHtml(href ?? '')}" alt="${escapeHtml(label ?? '')}"${titled}>`);
    } else {
      out += hold(
        `<a href="${escapeHtml(rewriteHref(href ?? ''))}"${titled}>${renderInline(label ?? '')}</a>`,
      );
    }
  }
  out = emphasis(out + renderText(text.slice(last)));
  return out.replace(/\uE000(\d+)\uE000/g, (_m, i: string) => tokens[Number(i)] ?? '');
}

export interface RenderedMarkdown {
  html: string;
  /** Text of the first level-1 heading, if any. */
  title?: string;
}

interface Page {
  slugs: Map<string, number>;
  title?: string;
}

const indentOf = (line: string) => (/^\s*/.exec(line)?.[0] ?? '').replaceAll('\t', '    ').length;
const isBlank = (line: string | undefined) => line === undefined || line.trim() === '';
/** Removes up to `n` columns of leading indentation. */
const dedent = (line: string, n: number) => line.replace(new RegExp(`^ {0,${n}}`), '');

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])(\s+)(.*)$/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;

/** A table row's cells: split at pipes not escaped, the outer pipes dropped; `\|` is a pipe. */
function cells(row: string): string[] {
  const inner = row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll('\\|', '|'));
}

function renderTable(lines: string[]): string {
  const [head = '', delimiter = '', ...rows] = lines;
  const aligns = cells(delimiter).map((d) =>
    d.startsWith(':') && d.endsWith(':')
      ? 'center'
      : d.endsWith(':')
        ? 'right'
        : d.startsWith(':')
          ? 'left'
          : '',
  );
  const cell = (tag: string, text: string, i: number) => {
    const align = aligns[i] ? ` style="text-align: ${aligns[i]}"` : '';
    return `<${tag}${align}>${renderInline(text)}</${tag}>`;
  };
  const headCells = cells(head);
  const body = rows.map((r) => {
    const cs = cells(r);
    return `<tr>${headCells.map((_, i) => cell('td', cs[i] ?? '', i)).join('')}</tr>`;
  });
  return `<table>\n<thead><tr>${headCells.map((c, i) => cell('th', c, i)).join('')}</tr></thead>\n<tbody>\n${body.join('\n')}\n</tbody>\n</table>`;
}

/** The lines of the list starting at `start`, and where it ends. */
function listBlock(lines: string[], start: number, base: number, ordered: boolean): number {
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end] ?? '';
    if (isBlank(line)) {
      // A blank line ends the list unless an item or indented content follows.
      const next = lines.slice(end + 1).find((l) => !isBlank(l));
      if (next === undefined) break;
      const item = LIST_ITEM.exec(next);
      const sameList = item && indentOf(next) === base && /\d/.test(item[2] ?? '') === ordered;
      if (!sameList && indentOf(next) <= base) break;
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (indentOf(line) <= base && item && /\d/.test(item[2] ?? '') !== ordered) break;
    // Other blocks at the list's indentation end it; plain text there continues the last item.
    if (indentOf(line) <= base && !item && (FENCE.test(line) || HEADING.test(line) || QUOTE.test(line)))
      break;
    if (indentOf(line) <= base && !item && isBlank(lines[end - 1])) break;
  }
  return end;
}

function renderList(lines: string[], page: Page): string {
  const first = LIST_ITEM.exec(lines[0] ?? '');
  const base = indentOf(lines[0] ?? '');
  const ordered = /\d/.test(first?.[2] ?? '');
  const items: string[][] = [];
  let contentIndent = 0;
  for (const line of lines) {
    const item = LIST_ITEM.exec(line);
    if (item && indentOf(line) === base) {
      contentIndent = base + (item[2] ?? '').length + Math.min((item[3] ?? ' ').length, 4);
      items.push([item[4] ?? '']);
    } else {
      items.at(-1)?.push(isBlank(line) ? '' : dedent(line.replaceAll('\t', '    '), contentIndent));
    }
  }
  // Tight (no blank line between items): the items' paragraphs lose their <p>.
  const loose = lines.slice(0, -1).some((l, i) => isBlank(l) && !isBlank(lines[i + 1]));
  const rendered = items.map((item) => {
    const html = renderBlocks(item, page).join('\n');
    return `<li>${loose ? html : html.replace(/<p>([\s\S]*?)<\/p>/g, '$1')}</li>`;
  });
  const startAt = ordered ? Number.parseInt(first?.[2] ?? '1', 10) : 1;
  const tag = ordered ? 'ol' : 'ul';
  const startAttr = startAt === 1 ? '' : ` start="${startAt}"`;
  return `<${tag}${startAttr}>${rendered.join('')}</${tag}>`;
}

function renderBlocks(lines: string[], page: Page): string[] {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) out.push(`<p>${renderInline(paragraph.join(' '))}</p>`);
    paragraph = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] ?? '';
    if (isBlank(line)) {
      flush();
      i++;
      continue;
    }
    if (line.trimStart().startsWith('<!--')) {
      // HTML comments are notes for editors.
      flush();
      while (i < lines.length && !(lines[i] ?? '').includes('-->')) i++;
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const [, indent = '', marker = '```', lang] = fence;
      const closing = new RegExp(`^\\s*${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      const code: string[] = [];
      for (i++; i < lines.length && !closing.test(lines[i] ?? ''); i++) {
        code.push(dedent(lines[i] ?? '', indent.length));
      }
      i++;
      const cls = lang ? ` class="language-${lang}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = heading[1]?.length ?? 1;
      const inner = renderInline(heading[2] ?? '');
      const text = unescapeHtml(inner.replace(/<[^>]*>/g, ''));
      if (level === 1 && page.title === undefined) page.title = text;
      out.push(`<h${level} id="${escapeHtml(githubSlug(text, page.slugs))}">${inner}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      flush();
      out.push('<hr>');
      i++;
      continue;
    }
    if (
      line.includes('|') &&
      TABLE_DELIMITER.test(lines[i + 1] ?? '') &&
      (lines[i + 1] ?? '').includes('-')
    ) {
      flush();
      let end = i + 2;
      while (end < lines.length && !isBlank(lines[end]) && (lines[end] ?? '').includes('|')) end++;
      out.push(renderTable(lines.slice(i, end)));
      i = end;
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      flush();
      const end = listBlock(lines, i, indentOf(line), /\d/.test(item[2] ?? ''));
      out.push(renderList(lines.slice(i, end), page));
      i = end;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted: string[] = [];
      for (; i < lines.length && !isBlank(lines[i]); i++) {
        const l = lines[i] ?? '';
        quoted.push(QUOTE.exec(l)?.[1] ?? l);
      }
      out.push(`<blockquote>${renderBlocks(quoted, page).join('\n')}</blockquote>`);
      continue;
    }
    paragraph.push(line.trim());
    i++;
  }
  flush();
  return out;
}

export function renderMarkdown(markdown: string): RenderedMarkdown {
  const page: Page = { slugs: new Map() };
  const html = renderBlocks(markdown.replaceAll('\r\n', '\n').split('\n'), page).join('\n');
  return page.title === undefined ? { html } : { html, title: page.title };
}
