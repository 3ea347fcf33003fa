// Renders a docs folder into a static site and packs it as bundle.tar.gz, the way the vendor's
// export looks: `a/b.md` -> `a/b.html`, shared assets, an index and a sitemap with extensionless
// URLs. The archive is written straight from memory (pages, assets, the docs' other files) through
// gzip to the job's file; benchmark padding is streamed, so bundle size never matters for memory.

import { createCipheriv, createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import { type TarItem, tarStream } from '../tar/writer.ts';
import type { SiteFault } from './faults.ts';
import { escapeHtml, type RenderedMarkdown, renderMarkdown } from './markdown.ts';

/** The sample docs folder shipped with the package (`sample-docs/` at the package root). */
export const DEFAULT_DOCS_DIR = fileURLToPath(new URL('../../sample-docs/', import.meta.url));

interface DocsListing {
  /** Markdown pages, relative POSIX paths, sorted. */
  pages: string[];
  /** Other files copied verbatim (images and the like), sorted. */
  files: string[];
}

/** Lists a docs folder; a missing folder lists as empty. Hidden entries are skipped. */
export async function listDocs(docsDir: string): Promise<DocsListing> {
  const listing: DocsListing = { pages: [], files: [] };
  let entries: string[];
  try {
    entries = await readdir(docsDir, { recursive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return listing;
    throw err;
  }
  for (const entry of entries.map((e) => e.split('\\').join('/')).sort()) {
    if (entry.split('/').some((part) => part.startsWith('.'))) continue;
    if (!(await stat(join(docsDir, entry))).isFile()) continue;
    if (entry.endsWith('.md')) listing.pages.push(entry);
    else listing.files.push(entry);
  }
  return listing;
}

/** `guides/install.md` -> `/guides/install`; `index.md` -> `/`; `guides/index.md` -> `/guides/`. */
export function pageUrlPath(page: string): string {
  const base = page.slice(0, -'.md'.length);
  if (base === 'index') return '/';
  if (base.endsWith('/index')) return `/${base.slice(0, -'index'.length)}`;
  return `/${base}`;
}

const SITE_CSS = `:root { color-scheme: light dark; --accent: #0d6efd; }
body { margin: 0; display: flex; font: 16px/1.6 system-ui, sans-serif; }
.sidebar { width: 16rem; padding: 1rem; border-right: 1px solid #8884; min-height: 100vh; }
.sidebar ul { list-style: none; padding: 0; }
.sidebar a[aria-current="page"] { font-weight: 600; color: var(--accent); }
main { flex: 1; max-width: 48rem; padding: 1rem 2rem; }
pre { padding: 1rem; overflow-x: auto; background: #8881; border-radius: 6px; }
blockquote { margin: 0; padding-left: 1rem; border-left: 3px solid var(--accent); }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { padding: 0.3rem 0.6rem; border: 1px solid #8884; vertical-align: top; }
`;

const SITE_JS = `// Marks the current page in the navigation; works with and without .html in the URL.
document.addEventListener('DOMContentLoaded', () => {
  const here = location.pathname.replace(/\\.html$/, '').replace(/\\/index$/, '/');
  for (const a of document.querySelectorAll('.sidebar a')) {
    if (a.getAttribute('href') === here) a.setAttribute('aria-current', 'page');
  }
});
`;

interface Page {
  source: string;
  output: string;
  urlPath: string;
  title: string;
  body: string;
}

/** Pages in every page's navigation at most. */
const NAV_PAGES = 100;

/**
 * `html`'s site-absolute links (`href="/…"`, `src="/…"`, not `//host`) under `basePath`: a site
 * exported for `/docs` is served there, so its links must carry the prefix. Attributes are always
 * double-quoted here (escapeHtml), so this finds them all.
 */
function underBasePath(html: string, basePath: string): string {
  return basePath ? html.replace(/\b(href|src)="\/(?!\/)/g, `$1="${basePath}/`) : html;
}

function layout(page: Page, links: string, domain: string, basePath: string): string {
  return underBasePath(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · ${escapeHtml(domain)}</title>
<link rel="canonical" href="https://${escapeHtml(domain)}${basePath}${escapeHtml(page.urlPath)}">
<link rel="stylesheet" href="/assets/site.css">
<script src="/assets/site.js" defer></script>
</head>
<body>
<nav class="sidebar"><a class="brand" href="/">${escapeHtml(domain)}</a>
<ul>
${links}
</ul></nav>
<main>
${page.body}
</main>
</body>
</html>
`,
    basePath,
  );
}

function sitemap(pages: Page[], domain: string, basePath: string): string {
  const urls = pages.map(
    (p) => `  <url><loc>https://${escapeHtml(domain)}${basePath}${escapeHtml(p.urlPath)}</loc></url>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls.join('\n')}
</urlset>
`;
}

const PAD_CHUNK = 1 << 20;
const PAD_FILE_MAX = 16 * PAD_CHUNK;

/**
 * `bytes` of incompressible but deterministic data (an AES-CTR keystream over zeros), so padded
 * re-exports of the same content still contain identical files. Produced as it is read.
 */
async function* padStream(bytes: number, index: number): AsyncGenerator<Uint8Array> {
  const key = createHash('sha256').update(`pad-${index}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  const zeros = Buffer.alloc(PAD_CHUNK);
  for (let left = bytes; left > 0; left -= PAD_CHUNK) {
    yield cipher.update(left >= PAD_CHUNK ? zeros : zeros.subarray(0, left));
  }
}

/** Rendered Markdown by file path, reused while the file's size and times stay the same. */
const renderedPages = new Map<
  string,
  { size: bigint; mtimeNs: bigint; ctimeNs: bigint; page: RenderedMarkdown }
>();
const RENDERED_PAGES_MAX = 1000;
// File times come from a coarse clock: a file written again within a tick of its last change may
// keep its times. A file is cached only once its last change is well behind (as git does).
const SETTLED_NS = 2_000_000_000n;

async function renderPage(path: string): Promise<RenderedMarkdown> {
  const info = await stat(path, { bigint: true });
  const cached = renderedPages.get(path);
  if (cached?.size === info.size && cached.mtimeNs === info.mtimeNs && cached.ctimeNs === info.ctimeNs)
    return cached.page;
  // Read after the stat: a change in between gives new times, so the next export reads again.
  const page = renderMarkdown(await readFile(path, 'utf8'));
  renderedPages.delete(path);
  // ctime: when the file last changed, whatever its mtime was set to.
  if (BigInt(Date.now()) * 1_000_000n - info.ctimeNs > SETTLED_NS) {
    renderedPages.set(path, { size: info.size, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs, page });
    // Oldest first: the entries of docs folders no longer exported go.
    if (renderedPages.size > RENDERED_PAGES_MAX)
      renderedPages.delete(renderedPages.keys().next().value as string);
  }
  return page;
}

interface RenderBundleOptions {
  docsDir: string;
  domain: string;
  /** Empty scratch directory owned by the caller; the archive is written inside it. */
  workDir: string;
  /** Timestamp stored for every archive entry (the export time). */
  mtime: Date;
  /** Only these pages (URL paths like `/guides/install`); all pages when absent. */
  paths?: string[];
  /** Adds pseudo-random asset files totalling about this many bytes (benchmarks). */
  padBytes?: number;
  /** Makes the site bad the way a broken export would (publish gate tests). */
  /** A bad site (a failing one never renders). */
  siteFault?: Exclude<SiteFault, { kind: 'fail' }>;
  /** Where the site will be served (`/docs`): its links carry this prefix; files stay at the root. */
  basePath?: string;
}

export interface RenderedBundle {
  archivePath: string;
  sizeBytes: number;
  /** Files in the archive, relative POSIX paths, sorted. */
  files: string[];
  pageCount: number;
}

export class RenderError extends Error {
  override name = 'RenderError';
}

export async function renderBundle(options: RenderBundleOptions): Promise<RenderedBundle> {
  const listing = await listDocs(options.docsDir);
  let sources = listing.pages;
  if (options.paths?.length) {
    const wanted = new Set(options.paths.map((p) => `/${p.replace(/^\/+|\/+$/g, '')}`));
    sources = sources.filter((s) => wanted.has(pageUrlPath(s).replace(/\/$/, '') || '/'));
    if (!sources.length) throw new RenderError('none of the requested paths exist in the docs');
  }
  if (!sources.length) throw new RenderError('the docs folder has no Markdown pages');

  const pages: Page[] = [];
  for (const source of sources) {
    const rendered = await renderPage(join(options.docsDir, source));
    const base = source.slice(0, -'.md'.length);
    pages.push({
      source,
      output: `${base}.html`,
      urlPath: pageUrlPath(source),
      title: rendered.title ?? base.split('/').pop() ?? base,
      body: rendered.html,
    });
  }

  const files = new Map<string, TarItem>();
  const inHand = (path: string, text: string | Buffer): void => {
    const content = typeof text === 'string' ? Buffer.from(text) : text;
    files.set(path, { path, kind: 'file', size: content.length, content });
  };
  // The list a generated index holds, and the navigation every page shows: its first NAV_PAGES
  // entries, as a large site's sidebar shows its sections, not every page (20,000 pages each
  // listing all 20,000 would make a bundle of gigabytes).
  const link = (p: Page) => `<li><a href="${escapeHtml(p.urlPath)}">${escapeHtml(p.title)}</a></li>`;
  const links = pages.map(link).join('\n');
  // The home page heads the navigation, wherever its file sorts.
  const navPages = [...pages].sort((a, b) => Number(b.urlPath === '/') - Number(a.urlPath === '/'));
  const nav = navPages.slice(0, NAV_PAGES).map(link).join('\n');
  const basePath = options.basePath ?? '';
  for (const page of pages) inHand(page.output, layout(page, nav, options.domain, basePath));
  if (!files.has('index.html')) {
    const index: Page = {
      source: '',
      output: 'index.html',
      urlPath: '/',
      title: options.domain,
      body: `<h1>${escapeHtml(options.domain)}</h1>\n<ul>\n${links}\n</ul>`,
    };
    inHand('index.html', layout(index, nav, options.domain, basePath));
  }
  const pageCount = options.siteFault ? spoilSite(files, options.siteFault) : pages.length;
  inHand('assets/site.css', SITE_CSS);
  inHand('assets/site.js', SITE_JS);
  inHand('sitemap.xml', sitemap(pages, options.domain, basePath));
  for (const rel of options.paths?.length ? [] : listing.files) {
    if (!files.has(rel)) inHand(rel, await readFile(join(options.docsDir, rel)));
  }
  const padBytes = Math.max(0, Math.floor(options.padBytes ?? 0));
  for (let i = 0, left = padBytes; left > 0; i++, left -= PAD_FILE_MAX) {
    const path = `assets/media/blob-${String(i).padStart(3, '0')}.bin`;
    const size = Math.min(left, PAD_FILE_MAX);
    files.set(path, { path, kind: 'file', size, content: padStream(size, i) });
  }
  const names = [...files.keys()].sort();

  // Directory entries first (so plain `tar xz` recreates them with sane modes), then files.
  const dirs = new Set<string>();
  for (const rel of names) {
    for (let d = posix.dirname(rel); d !== '.'; d = posix.dirname(d)) dirs.add(d);
  }
  // An empty export still carries its directory entries: an archive of directories only.
  const archived = options.siteFault?.kind === 'empty' ? [] : names;
  const items: TarItem[] = [
    ...[...dirs].sort().map((path): TarItem => ({ path, kind: 'dir', size: 0 })),
    ...archived.map((path) => files.get(path) as TarItem),
  ];
  const archivePath = join(options.workDir, 'bundle.tar.gz');
  const out = createWriteStream(archivePath);
  await pipeline(
    tarStream(items, { mtime: options.mtime }),
    // Padding is incompressible: the fastest level keeps large benchmark bundles quick to build.
    createGzip({ level: padBytes > 0 ? 1 : 6 }),
    out,
  );
  return { archivePath, sizeBytes: out.bytesWritten, files: archived, pageCount };
}

/** Removes HTML pages from the site's files as `fault` says; returns how many pages are left. */
function spoilSite(files: Map<string, TarItem>, fault: Exclude<SiteFault, { kind: 'fail' }>): number {
  const html = [...files.keys()].filter((f) => f.endsWith('.html'));
  const keep =
    fault.kind === 'empty'
      ? []
      : fault.kind === 'noindex'
        ? html.filter((f) => f !== 'index.html')
        : ['index.html', ...html.filter((f) => f !== 'index.html').slice(0, fault.pages - 1)];
  for (const f of html) if (!keep.includes(f)) files.delete(f);
  return keep.length;
}
