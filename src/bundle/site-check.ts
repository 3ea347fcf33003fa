import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What a publish gate looks at in an extracted site. */
export interface SiteSummary {
  /** HTML pages: regular files ending in `.html` or `.htm`, except the root `404.html` error page. */
  pages: number;
  /** Whether `index.html` is a regular file at the site root (what `/` serves). */
  hasIndex: boolean;
}

const PAGE = /\.html?$/i;
// The error page is served for missing URLs, not as content: a site of only a 404 page is empty.
const ERROR_PAGE = '404.html';

/** Whether a regular file at `rel` (relative, `/` separators) counts as a page. */
export function isPage(rel: string): boolean {
  return PAGE.test(rel) && rel !== ERROR_PAGE;
}

/** The summary of a site given its regular files' relative paths (`/` separators). */
export function siteSummaryOf(files: Iterable<string>): SiteSummary {
  let pages = 0;
  let hasIndex = false;
  for (const rel of files) {
    if (!isPage(rel)) continue;
    pages += 1;
    if (rel === 'index.html') hasIndex = true;
  }
  return { pages, hasIndex };
}

/** Walks an extracted site (directory entries only, no file reads). */
export async function summarizeSite(root: string): Promise<SiteSummary> {
  const files: string[] = [];
  const pending = [''];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(rel);
      else if (entry.isFile()) files.push(rel);
    }
  }
  return siteSummaryOf(files);
}
