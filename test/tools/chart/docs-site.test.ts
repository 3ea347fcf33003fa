// The project's own docs/ as `npm run demo` serves them: exported by the simulator, fetched by the
// site chart's init container command and served by real nginx with the chart's config, then read
// in headless Chromium from the home page on. Every internal link is followed (each page answers
// 200, each #anchor names an element on its page) and every page renders: its <h1>, and no
// Markdown left in its text. Whatever docs/ holds is crawled; every Markdown page must be reached.
// The screenshot of the quickstart page is kept in test-artifacts/.
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listDocs, pageUrlPath, type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';
import {
  freePort,
  helmTemplate,
  inlineValues,
  merge,
  ROOT,
  type RunningNginx,
  renderedSecrets,
  runInitContainer,
  scratchDir,
  startNginx,
} from '../../support/tools/chart.ts';

const CHROMIUM = '/usr/bin/chromium';
const DOCS = join(ROOT, 'docs');
const ARTIFACTS = join(ROOT, 'test-artifacts');

let sim: Simulator;
let site: RunningNginx;
let browser: BrowserContext;

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 0, docsDir: DOCS });
  const { bundleUrl } = await exportBundle(sim);
  const mount = await scratchDir('docs-www-');
  await chmod(mount, 0o777);
  const port = await freePort();
  const rendered = await helmTemplate(
    'helm4',
    merge(inlineValues(bundleUrl), { siteMountPath: mount, containerPort: port }),
  );
  expect(rendered.stderr).toBe('');
  const init = await runInitContainer(rendered.objects, renderedSecrets(rendered.objects));
  expect(init.code, init.stderr).toBe(0);
  site = await startNginx(rendered.objects, port);
  browser = await chromium.launchPersistentContext(await scratchDir('chromium-profile-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.stop();
  await sim?.close();
});

interface PageReading {
  status: number;
  h1: string[];
  ids: string[];
  links: string[];
  /** The page's text outside code, where Markdown left unrendered would show. */
  prose: string;
}

describe('the docs site, as the demo serves it, in Chromium', () => {
  it('has no broken internal link or anchor, and every page renders with its heading and no raw Markdown', async () => {
    const page = await browser.newPage();
    const origin = site.baseUrl;
    const readings = new Map<string, PageReading>();
    /** The first page found linking to each path, for the report. */
    const linkedFrom = new Map<string, string>();
    const queue = ['/'];
    while (queue.length) {
      const path = queue.shift() as string;
      if (readings.has(path)) continue;
      const res = await page.goto(`${origin}${path}`);
      // Page code as strings: it runs in the browser (this project compiles without DOM types).
      const reading = (await page.evaluate(`(() => {
        const main = document.querySelector('main') ?? document.body;
        const prose = main.cloneNode(true);
        for (const code of prose.querySelectorAll('pre, code')) code.remove();
        return {
          h1: [...main.querySelectorAll('h1')].map((h) => h.textContent.trim()),
          ids: [...document.querySelectorAll('[id]')].map((e) => e.id),
          links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
          prose: prose.textContent,
        };
      })()`)) as Omit<PageReading, 'status'>;
      readings.set(path, { status: res?.status() ?? 0, ...reading });
      if (path === '/quickstart') {
        await mkdir(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'docs-quickstart.png'), fullPage: true });
      }
      for (const href of reading.links) {
        const url = new URL(href);
        if (url.origin !== origin || readings.has(url.pathname)) continue;
        if (!linkedFrom.has(url.pathname)) linkedFrom.set(url.pathname, path);
        queue.push(url.pathname);
      }
    }
    await page.close();

    const problems: string[] = [];
    for (const [path, r] of readings) {
      if (r.status !== 200) problems.push(`${path} (linked from ${linkedFrom.get(path)}): HTTP ${r.status}`);
      if (r.h1.length === 0 || r.h1.some((h) => h === '')) problems.push(`${path}: no <h1>`);
      for (const raw of ['](', '|---', '```', '**']) {
        if (r.prose.includes(raw)) problems.push(`${path}: raw Markdown "${raw}" in its text`);
      }
      for (const href of r.links) {
        const url = new URL(href);
        if (url.origin !== origin || !url.hash) continue;
        const target = readings.get(url.pathname);
        const id = decodeURIComponent(url.hash.slice(1));
        if (target && !target.ids.includes(id))
          problems.push(`${path}: link to ${url.pathname}${url.hash}: no such anchor`);
      }
    }
    expect(problems).toEqual([]);

    // Every page of docs/ is reached from the home page (the sidebar lists them all).
    const { pages } = await listDocs(DOCS);
    expect(pages.length).toBeGreaterThan(1);
    for (const source of pages) expect([...readings.keys()], source).toContain(pageUrlPath(source));
  });
});
