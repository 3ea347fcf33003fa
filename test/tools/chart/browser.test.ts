// A real browser (Debian's headless Chromium, driven by playwright-core) on the site as the chart
// serves it: pages render, internal links resolve, and the Content-Security-Policy holds as a
// browser enforces it. The screenshot of the home page is kept in test-artifacts/.
import { chmod, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
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
  siteDocs,
  startNginx,
} from '../../support/tools/chart.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts');
// A host that resolves nowhere: a request the policy let through would fail, not reach anyone.
const OUTSIDE = 'http://example.invalid';

let sim: Simulator;
let browser: BrowserContext;
let airGapped: RunningNginx;
let clientHosted: RunningNginx;
let searchHost: Server;
let searchOrigin: string;
const searchRequests: string[] = [];

async function serve(siteMountPath: string, values: object): Promise<RunningNginx> {
  const port = await freePort();
  const rendered = await helmTemplate('helm4', merge(values, { siteMountPath, containerPort: port }));
  expect(rendered.stderr).toBe('');
  return startNginx(rendered.objects, port);
}

async function newPage(): Promise<{ page: Page; console: string[] }> {
  const page = await browser.newPage();
  const console: string[] = [];
  page.on('console', (m) => console.push(m.text()));
  return { page, console };
}

/** Runs fetch in the page; resolves to the response text or the error the page saw. */
function fetchFromPage(page: Page, url: string): Promise<string> {
  return page.evaluate(
    (target) =>
      fetch(target).then(
        (r) => r.text(),
        (e: Error) => `blocked: ${e.message}`,
      ),
    url,
  );
}

beforeAll(async () => {
  searchHost = createServer((req, res) => {
    searchRequests.push(req.url ?? '');
    res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' });
    res.end('search results');
  });
  await new Promise<void>((resolve) => searchHost.listen(0, '127.0.0.1', resolve));
  searchOrigin = `http://127.0.0.1:${(searchHost.address() as AddressInfo).port}`;

  sim = await startSimulator({ exportDurationMs: 0, docsDir: await siteDocs() });
  const { bundleUrl } = await exportBundle(sim);
  const mount = await scratchDir('www-');
  await chmod(mount, 0o777);
  const base = inlineValues(bundleUrl, { deploymentKind: 'airGapped' });
  const fetched = await helmTemplate('helm4', merge(base, { siteMountPath: mount }));
  const init = await runInitContainer(fetched.objects, renderedSecrets(fetched.objects));
  expect(init.code, init.stderr).toBe(0);

  airGapped = await serve(mount, base);
  clientHosted = await serve(
    mount,
    inlineValues(bundleUrl, {
      deploymentKind: 'clientHosted',
      features: { search: { enabled: true, host: searchOrigin } },
    }),
  );

  browser = await chromium.launchPersistentContext(await scratchDir('chromium-profile-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await airGapped?.stop();
  await clientHosted?.stop();
  await sim?.close();
  await new Promise((resolve) => searchHost?.close(resolve));
});

describe('the served site in Chromium', () => {
  it('renders the home page with its stylesheet and script, and every internal link resolves', async () => {
    const { page } = await newPage();
    const home = await page.goto(`${airGapped.baseUrl}/`);
    expect(home?.status()).toBe(200);
    await expect.poll(() => page.locator('.sidebar').isVisible()).toBe(true);
    // site.css lays the page out (flex) and site.js marks the current page: both were allowed.
    expect(await page.evaluate('getComputedStyle(document.body).display')).toBe('flex');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'site-home.png'), fullPage: true });

    const links = await page.$$eval('a[href^="/"]', (as) => [
      ...new Set(as.map((a) => a.getAttribute('href'))),
    ]);
    expect(links.length).toBeGreaterThan(3);
    for (const href of links) {
      const res = await page.goto(`${airGapped.baseUrl}${href}`);
      expect(res?.status(), String(href)).toBe(200);
      expect(await page.title(), String(href)).not.toBe('');
      await expect
        .poll(() => page.locator('.sidebar a[aria-current="page"]').count(), { message: String(href) })
        .toBeGreaterThan(0);
    }
    await page.close();
  });

  it('air-gapped: a page script’s request to an outside host is blocked, with a CSP violation', async () => {
    const { page, console } = await newPage();
    await page.goto(`${airGapped.baseUrl}/getting-started`);
    // Page code as strings: it runs in the browser (this project compiles without DOM types).
    const violations = page.evaluate(`new Promise((resolve) => document.addEventListener(
      'securitypolicyviolation', (e) => resolve(e.effectiveDirective + ' ' + e.blockedURI)))`);
    expect(await fetchFromPage(page, `${OUTSIDE}/collect`)).toMatch(/^blocked: /);
    expect(await violations).toBe(`connect-src ${OUTSIDE}/collect`);
    expect(console.join('\n')).toContain(
      `Connecting to '${OUTSIDE}/collect' violates the following Content Security Policy directive: "connect-src 'self'"`,
    );
    // The site itself stays reachable from its scripts.
    expect(await fetchFromPage(page, '/sitemap.xml')).toContain('<urlset');
    await page.close();
  });

  it('client-hosted with search on: the configured search host is allowed, others are not', async () => {
    const { page, console } = await newPage();
    await page.goto(`${clientHosted.baseUrl}/`);
    expect(await fetchFromPage(page, `${searchOrigin}/search?q=install`)).toBe('search results');
    expect(searchRequests).toContain('/search?q=install');
    expect(await fetchFromPage(page, `${OUTSIDE}/collect`)).toMatch(/^blocked: /);
    expect(console.join('\n')).toContain(
      `Connecting to '${OUTSIDE}/collect' violates the following Content Security Policy directive: "connect-src 'self' ${searchOrigin}"`,
    );
    // The same site served air-gapped refuses the search host.
    const { page: gapped } = await newPage();
    await gapped.goto(`${airGapped.baseUrl}/`);
    expect(await fetchFromPage(gapped, `${searchOrigin}/search?q=other`)).toMatch(/^blocked: /);
    expect(searchRequests).not.toContain('/search?q=other');
    await page.close();
    await gapped.close();
  });
});
