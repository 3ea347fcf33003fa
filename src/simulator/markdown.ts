// A deliberately small Markdown subset (headings, paragraphs, flat lists, fenced code, quotes,
// inline code, emphasis, links): enough to give simulated bundles realistic pages without a
// dependency. Links to `*.md` files become extensionless, as in the vendor's exports.

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** `guides/install.md#x` -> `guides/install#x`; `index.md` -> `./`; external links unchanged. */
export function rewriteHref(href: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) return href;
  const hashAt = href.indexOf('#');
  const path = hashAt === -1 ? href : href.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : href.slice(hashAt);
  if (!path.endsWith('.md')) return href;
  let out = path.slice(0, -'.md'.length);
  if (out === 'index' || out.endsWith('/index')) out = out.slice(0, -'index'.length) || './';
  return out + hash;
}

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function renderInline(text: string): string {
  // Code spans first so their content is not treated as emphasis or links.
  return text
    .split(/(`[^`]+`)/)
    .map((part) => {
      if (part.length > 2 && part.startsWith('`') && part.endsWith('`')) {
        return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      }
      return escapeHtml(part)
        .replace(
          /\[([^\]]+)\]\(([^)\s]+)\)/g,
          (_m, label: string, href: string) => `<a href="${rewriteHref(href)}">${label}</a>`,
        )
        .replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>')
        .replace(/\*(.+?)\*/g, '<em>$1</em>');
    })
    .join('');
}

export interface RenderedMarkdown {
  html: string;
  /** Text of the first level-1 heading, if any. */
  title?: string;
}

export function renderMarkdown(markdown: string): RenderedMarkdown {
  const out: string[] = [];
  let title: string | undefined;
  let paragraph: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | undefined;
  let quote: string[] = [];

  const flush = (): void => {
    if (paragraph.length) out.push(`<p>${renderInline(paragraph.join(' '))}</p>`);
    if (list)
      out.push(`<${list.tag}>${list.items.map((i) => `<li>${renderInline(i)}</li>`).join('')}</${list.tag}>`);
    if (quote.length) out.push(`<blockquote><p>${renderInline(quote.join(' '))}</p></blockquote>`);
    paragraph = [];
    list = undefined;
    quote = [];
  };

  const lines = markdown.replaceAll('\r\n', '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) code.push(lines[i] ?? '');
      const cls = fence[1] ? ` class="language-${fence[1]}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1]?.length ?? 1;
      const text = heading[2] ?? '';
      if (level === 1 && title === undefined) title = text;
      out.push(`<h${level} id="${slugify(text)}">${renderInline(text)}</h${level}>`);
      continue;
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    const item = bullet ?? numbered;
    if (item) {
      const tag = bullet ? 'ul' : 'ol';
      if (!list || list.tag !== tag) {
        flush();
        list = { tag, items: [] };
      }
      list.items.push(item[1] ?? '');
      continue;
    }
    const quoted = /^>\s?(.*)$/.exec(line);
    if (quoted) {
      if (!quote.length) flush();
      quote.push(quoted[1] ?? '');
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (list) {
      // A continuation line of the last list item.
      const last = list.items.length - 1;
      list.items[last] = `${list.items[last]} ${line.trim()}`;
      continue;
    }
    paragraph.push(line.trim());
  }
  flush();
  return title === undefined ? { html: out.join('\n') } : { html: out.join('\n'), title };
}
