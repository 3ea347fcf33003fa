import { cp, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Parser } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_DOCS_DIR,
  formatFault,
  parseFault,
  renderBundle,
  renderMarkdown,
  type Simulator,
  startSimulator,
} from '../../../src/simulator/index.ts';
import { call, completedExport, download, untar } from './helpers.ts';

describe('rendered bundles', () => {
  let sim: Simulator;
  let docs: string;

  beforeAll(async () => {
    docs = await mkdtemp(join(tmpdir(), 'sim-docs-'));
    await cp(DEFAULT_DOCS_DIR, docs, { recursive: true });
    sim = await startSimulator({ exportDurationMs: 10, docsDir: docs });
  });
  afterAll(async () => {
    await sim.close();
    await rm(docs, { recursive: true, force: true });
  });

  async function exportFiles(domain = 'docs.acme.dev') {
    const link = await completedExport(sim, domain);
    const archive = (await download(link.bundleUrl)).body;
    return { archive, files: await untar(archive) };
  }

  it('turns each Markdown page into page.html plus shared assets, index and sitemap', async () => {
    const { files } = await exportFiles();
    expect([...files.keys()].sort()).toEqual([
      'assets/site.css',
      'assets/site.js',
      'getting-started.html',
      'guides/configure.html',
      'guides/install.html',
      'guides/upgrade.html',
      'index.html',
      'reference/api.html',
      'reference/cli.html',
      'reference/faq.html',
      'sitemap.xml',
    ]);
    const install = files.get('guides/install.html')?.content.toString() ?? '';
    expect(install).toContain('<h1 id="install">Install</h1>');
    expect(install).toContain('<pre><code class="language-sh">npm install --global acme-cli');
    expect(install).toContain('<a href="configure">Configure</a>');
    expect(install).toContain('<link rel="canonical" href="https://docs.acme.dev/guides/install">');
    expect(install).toContain('href="/assets/site.css"');
    // The home page heads the navigation, though index.md sorts after getting-started.md and guides/.
    expect(install).toContain('<ul>\n<li><a href="/">Acme Docs</a></li>\n<li><a href="/getting-started">');
    const sitemap = files.get('sitemap.xml')?.content.toString() ?? '';
    expect(sitemap).toContain('<loc>https://docs.acme.dev/guides/install</loc>');
    expect(sitemap).toContain('<loc>https://docs.acme.dev/</loc>');
    expect(sitemap).not.toContain('.html');
  });

  it('re-exporting unchanged content gives different archive bytes with identical files', async () => {
    const a = await exportFiles();
    const b = await exportFiles();
    expect(a.archive.equals(b.archive)).toBe(false);
    expect([...b.files.keys()]).toEqual([...a.files.keys()]);
    for (const [path, file] of a.files)
      expect(b.files.get(path)?.content.equals(file.content), path).toBe(true);
    const mtimeA = a.files.get('index.html')?.mtime?.getTime() ?? 0;
    const mtimeB = b.files.get('index.html')?.mtime?.getTime() ?? 0;
    expect(mtimeB).toBeGreaterThan(mtimeA);
  });

  it('changing the docs folder changes the content', async () => {
    const before = await exportFiles();
    await writeFile(join(docs, 'guides/new-page.md'), '# New page\n\nFresh *content*.\n');
    await writeFile(join(docs, 'guides/install.md'), '# Install\n\nChanged.\n');
    const after = await exportFiles();
    expect(after.files.get('guides/new-page.html')?.content.toString()).toContain('<em>content</em>');
    expect(before.files.has('guides/new-page.html')).toBe(false);
    expect(
      after.files
        .get('guides/install.html')
        ?.content.equals(before.files.get('guides/install.html')?.content ?? Buffer.alloc(0)),
    ).toBe(false);
  });

  it('a page rewritten at the same size shows its new text, also when its mtime is put back', async () => {
    const page = join(docs, 'guides/upgrade.md');
    const text = async () => (await exportFiles()).files.get('guides/upgrade.html')?.content.toString();
    await writeFile(page, '# Upgrade\n\nVersion one.\n');
    expect(await text()).toContain('Version one.');
    // The same size, with an mtime that can be put back to the nanosecond.
    await writeFile(page, '# Upgrade\n\nVersion two.\n');
    const restored = new Date('2026-01-01T00:00:00Z');
    await utimes(page, restored, restored);
    expect(await text()).toContain('Version two.');
    // Rendered pages are reused once their last change is two seconds behind.
    await new Promise((r) => setTimeout(r, 2100));
    expect(await text()).toContain('Version two.');
    expect(await text()).toContain('Version two.');
    // As a checkout or `cp -p` may: new text, the same size and mtime.
    await writeFile(page, '# Upgrade\n\nVersion six.\n');
    await utimes(page, restored, restored);
    expect(await text()).toContain('Version six.');
  });

  it('exports only the requested paths', async () => {
    const started = await call(sim, 'POST', '/v1/static-export/jobs', {
      domain: 'docs.acme.dev',
      paths: ['/guides/install', 'reference/faq/'],
    });
    const jobId = String(started.json.jobId);
    await new Promise((r) => setTimeout(r, 30));
    expect((await call(sim, 'GET', `/v1/static-export/jobs/${jobId}`)).json).toMatchObject({
      status: 'completed',
      pageCount: 2,
    });
    const bundle = await call(sim, 'POST', `/v1/static-export/jobs/${jobId}/bundle`);
    const files = await untar((await download(String(bundle.json.bundleUrl))).body);
    expect([...files.keys()].filter((f) => f.endsWith('.html')).sort()).toEqual([
      'guides/install.html',
      'index.html',
      'reference/faq.html',
    ]);
  });

  it('exports the pages of a mounted ConfigMap (the simulator chart’s docs.configMap), not its hidden data folders', async () => {
    // The kubelet's layout: each key a link into ..data, itself a link to a timestamped folder.
    const mount = await mkdtemp(join(tmpdir(), 'sim-configmap-'));
    try {
      await mkdir(join(mount, '..2026_11_26_04_00_00.1'));
      await writeFile(
        join(mount, '..2026_11_26_04_00_00.1', 'index.md'),
        '# Our docs\n\n[Install](install.md#helm)\n',
      );
      await writeFile(join(mount, '..2026_11_26_04_00_00.1', 'install.md'), '# Install\n\n## Helm\n');
      await symlink('..2026_11_26_04_00_00.1', join(mount, '..data'));
      await symlink('..data/index.md', join(mount, 'index.md'));
      await symlink('..data/install.md', join(mount, 'install.md'));
      sim.configure({ docsDir: mount });
      const { files } = await exportFiles('configmap.example');
      expect([...files.keys()].filter((f) => f.endsWith('.html')).sort()).toEqual([
        'index.html',
        'install.html',
      ]);
      expect(files.get('index.html')?.content.toString()).toContain('<a href="install#helm">Install</a>');
      expect(files.get('install.html')?.content.toString()).toContain('<h2 id="helm">Helm</h2>');
    } finally {
      sim.configure({ docsDir: docs });
      await rm(mount, { recursive: true, force: true });
    }
  });

  it('generates an index when the docs have none', async () => {
    const bare = await mkdtemp(join(tmpdir(), 'sim-bare-'));
    try {
      await writeFile(join(bare, 'one.md'), '# One\n');
      await writeFile(join(bare, 'two.md'), '# Two\n');
      sim.configure({ docsDir: bare });
      const { files } = await exportFiles('bare.example');
      expect(files.get('index.html')?.content.toString()).toContain('<a href="/one">One</a>');
    } finally {
      sim.configure({ docsDir: docs });
      await rm(bare, { recursive: true, force: true });
    }
  });
});

describe('renderMarkdown', () => {
  it('renders headings, lists, code, quotes, emphasis and escapes HTML', () => {
    const { html, title } = renderMarkdown(
      '# Title <x>\n\nSome **bold** and `a<b` with [link](../x.md#y).\n\n- one\n- two\n\n1. first\n2. second\n\n> note\n\n```js\nif (a < b) {}\n```\n',
    );
    expect(title).toBe('Title <x>');
    expect(html).toContain('<h1 id="title-x">Title &lt;x&gt;</h1>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>a&lt;b</code>');
    expect(html).toContain('<a href="../x#y">link</a>');
    expect(html).toContain('<ul><li>one</li><li>two</li></ul>');
    expect(html).toContain('<ol><li>first</li><li>second</li></ol>');
    expect(html).toContain('<blockquote><p>note</p></blockquote>');
    expect(html).toContain('<pre><code class="language-js">if (a &lt; b) {}</code></pre>');
  });

  it('keeps external links and maps index pages to folders', () => {
    const { html } = renderMarkdown('[a](https://x.example/a.md) [b](guides/index.md) [c](index.md)');
    expect(html).toContain('href="https://x.example/a.md"');
    expect(html).toContain('href="guides/"');
    expect(html).toContain('href="./"');
  });
  it('gives headings the ids GitHub gives them, so #anchor links from other pages land', () => {
    const { html, title } = renderMarkdown(
      '# The `static-export` CLI\n\n## Status in Flux, Argo CD and kstatus\n\n## Ready reasons\n\n### Ready reasons\n\n## A -- B: *c*?\n',
    );
    expect(title).toBe('The static-export CLI');
    expect(html).toContain('<h1 id="the-static-export-cli">The <code>static-export</code> CLI</h1>');
    expect(html).toContain('<h2 id="status-in-flux-argo-cd-and-kstatus">');
    expect(html).toContain('<h2 id="ready-reasons">');
    expect(html).toContain('<h3 id="ready-reasons-1">');
    expect(html).toContain('<h2 id="a----b-c">');
  });

  it('maps relative links to .md pages, with their anchors, to the exported pages', () => {
    const { html } = renderMarkdown(
      '[a](spec/release.md#ready-reasons) [b](../gitops.md#flux) [c](../index.md#latest) [d](#local) [e](./cli.md)',
    );
    expect(html).toContain('<a href="spec/release#ready-reasons">a</a>');
    expect(html).toContain('<a href="../gitops#flux">b</a>');
    expect(html).toContain('<a href="../#latest">c</a>');
    expect(html).toContain('<a href="#local">d</a>');
    expect(html).toContain('<a href="./cli">e</a>');
  });

  it('renders tables with alignment, escaped pipes and inline Markdown in cells', () => {
    const { html } = renderMarkdown(
      '| flag | default | meaning |\n|---|:-:|--:|\n| `--link-style` | `query\\|path` | see [CLI](cli.md#flags) |\n| **x** | 1 |\n',
    );
    expect(html).toContain(
      '<thead><tr><th>flag</th><th style="text-align: center">default</th><th style="text-align: right">meaning</th></tr></thead>',
    );
    expect(html).toContain(
      '<tr><td><code>--link-style</code></td><td style="text-align: center"><code>query|path</code></td><td style="text-align: right">see <a href="cli#flags">CLI</a></td></tr>',
    );
    // A short row gets its missing cells.
    expect(html).toContain(
      '<tr><td><strong>x</strong></td><td style="text-align: center">1</td><td style="text-align: right"></td></tr>',
    );
  });

  it('renders emphasis around code and links, link labels holding code, images, autolinks and escapes', () => {
    const { html } = renderMarkdown(
      'A **`StaticExportRelease`** and [`static-export fetch`](cli.md#fetch), ![logo](logo.png "Logo"), <https://example.com/x>, \\*not italic\\*, \\<b\\> and snake_case_name.',
    );
    expect(html).toBe(
      '<p>A <strong><code>StaticExportRelease</code></strong> and <a href="cli#fetch"><code>static-export fetch</code></a>, <img src="logo.png" alt="logo" title="Logo">, <a href="https://example.com/x">https://example.com/x</a>, &#42;not italic&#42;, &#60;b&#62; and snake_case_name.</p>',
    );
  });

  it('renders nested lists, code fenced inside an item, rules, ordered lists from another start, and drops comments', () => {
    const { html } = renderMarkdown(
      [
        '<!-- a note for editors -->',
        '3. install:',
        '',
        '   ```sh',
        '   helm install x',
        '   ```',
        '4. then',
        '   - one',
        '   - two',
        '     continued',
        '',
        '---',
        '',
        '- a',
        '  - b',
        '- c',
      ].join('\n'),
    );
    expect(html).not.toContain('editors');
    expect(html).toContain(
      '<ol start="3"><li><p>install:</p>\n<pre><code class="language-sh">helm install x</code></pre></li>',
    );
    expect(html).toContain('<li><p>then</p>\n<ul><li>one</li><li>two continued</li></ul></li></ol>');
    expect(html).toContain('<hr>');
    expect(html).toContain('<ul><li>a\n<ul><li>b</li></ul></li><li>c</li></ul>');
  });
});

describe('bad exports (site faults on start)', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 10 });
  });
  afterAll(() => sim.close());

  async function exportWith(faults: string[]) {
    sim.configure({ faults });
    const link = await completedExport(sim);
    const status = await call(sim, 'GET', `/v1/static-export/jobs/${link.jobId}`);
    const archive = (await download(link.bundleUrl)).body;
    const entries: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const parser = new Parser({
        onReadEntry: (e) => {
          entries.push(`${e.type} ${e.path}`);
          e.resume();
        },
      });
      parser.on('end', () => resolve());
      parser.on('error', reject);
      parser.end(archive);
    });
    const html = [...(await untar(archive)).keys()].filter((f) => f.endsWith('.html')).sort();
    return { status: status.json.status, pageCount: status.json.pageCount, html, entries };
  }

  it('empty: the job completes with an archive of directories only, 0 pages', async () => {
    const bad = await exportWith(['start:empty:1:1']);
    expect(bad.status).toBe('completed');
    expect(bad.pageCount).toBe(0);
    expect(bad.entries.length).toBeGreaterThan(0);
    expect(bad.entries.every((e) => e.startsWith('Directory '))).toBe(true);
    // `times` 1: the next export is whole again.
    expect((await exportWith([])).html).toHaveLength(8);
  });

  it('noindex: every page but index.html', async () => {
    const bad = await exportWith(['start:noindex:1']);
    expect(bad.html).not.toContain('index.html');
    expect(bad.html).toHaveLength(7);
    expect(bad.pageCount).toBe(7);
  });

  it('pages=N: index.html and N-1 other pages', async () => {
    const bad = await exportWith(['start:pages=2:1']);
    expect(bad.html).toEqual(['getting-started.html', 'index.html']);
    expect(bad.pageCount).toBe(2);
  });
});

describe('parseFault', () => {
  it.each([
    ['start:empty:1:1', { endpoint: 'start', action: { kind: 'empty' }, rate: 1, times: 1 }],
    ['start:noindex:0.5', { endpoint: 'start', action: { kind: 'noindex' }, rate: 0.5 }],
    ['start:pages=3:1', { endpoint: 'start', action: { kind: 'pages', pages: 3 }, rate: 1 }],
    ['bundle:503:0.3', { endpoint: 'bundle', action: { kind: 'status', status: 503 }, rate: 0.3 }],
    ['status:reset:1', { endpoint: 'status', action: { kind: 'reset' }, rate: 1 }],
    ['start:delay=2000:0.5', { endpoint: 'start', action: { kind: 'delay', ms: 2000 }, rate: 0.5 }],
    ['status:malformed:1', { endpoint: 'status', action: { kind: 'malformed' }, rate: 1 }],
    ['download:truncate:0.5:2', { endpoint: 'download', action: { kind: 'truncate' }, rate: 0.5, times: 2 }],
    ['agent-create:429:1', { endpoint: 'agent-create', action: { kind: 'status', status: 429 }, rate: 1 }],
    ['start:fail:1', { endpoint: 'start', action: { kind: 'fail' }, rate: 1 }],
    [
      'start:created=504:1:1',
      { endpoint: 'start', action: { kind: 'created', answer: 504 }, rate: 1, times: 1 },
    ],
    [
      'start:created=reset:0.5',
      { endpoint: 'start', action: { kind: 'created', answer: 'reset' }, rate: 0.5 },
    ],
    [
      'status@proj_1:503:1:2',
      { endpoint: 'status', project: 'proj_1', action: { kind: 'status', status: 503 }, rate: 1, times: 2 },
    ],
  ])('parses %s', (text, spec) => {
    expect(parseFault(text)).toEqual(spec);
    expect(formatFault(parseFault(text))).toBe(text);
  });

  it.each([
    ['bundle:503', /wrong number of parts/],
    ['nowhere:503:1', /unknown endpoint "nowhere"/],
    ['bundle:200:1', /not an error status/],
    ['bundle:explode:1', /unknown kind "explode"/],
    ['bundle:delay=-5:1', /delay must be/],
    ['status:truncate:1', /truncate only applies to download/],
    ['bundle:empty:1', /empty only applies to start/],
    ['start:pages=0:1', /pages must be a positive integer/],
    ['status:fail:1', /fail only applies to start/],
    ['status:created=502:1', /created=502 only applies to start/],
    ['start:created=404:1', /created= takes a 5xx status or reset/],
    ['start:created=:1', /created= takes a 5xx status or reset/],
    ['bundle:503:1.5', /rate must be between 0 and 1/],
    ['bundle:503:abc', /rate must be/],
    ['bundle:503:1:0', /times must be a positive integer/],
    ['status@a.b:503:1', /bad project "a.b"/],
    ['status@:503:1', /bad project ""/],
  ])('refuses %s clearly', (text, message) => {
    expect(() => parseFault(text)).toThrow(message);
    expect(() => parseFault(text)).toThrow(/endpoint:kind:rate/);
  });

  it('applies rates with the injected random source', async () => {
    let next = 0.9;
    const sim = await startSimulator({ faults: ['status:500:0.5'], random: () => next });
    try {
      const get = () => fetch(`${sim.baseUrl}/v1/static-export/jobs/x`).then((r) => r.status);
      expect(await get()).toBe(401);
      next = 0.1;
      expect(await get()).toBe(500);
    } finally {
      await sim.close();
    }
  });
});

describe('a large site', () => {
  it("lists every page in the generated index but only the first 100 in each page's navigation", async () => {
    const docs = await mkdtemp(join(tmpdir(), 'sim-large-'));
    const work = await mkdtemp(join(tmpdir(), 'sim-large-work-'));
    try {
      for (let i = 0; i < 500; i++)
        await writeFile(join(docs, `p${String(i).padStart(3, '0')}.md`), `# Page ${i}\n`);
      const bundle = await renderBundle({
        docsDir: docs,
        domain: 'docs.acme.dev',
        workDir: work,
        mtime: new Date(0),
      });
      expect(bundle.pageCount).toBe(500);
      const files = await untar(await readFile(join(work, 'bundle.tar.gz')));
      const linksIn = (html: string) => html.match(/<li><a href=/g)?.length ?? 0;
      const index = files.get('index.html')?.content.toString() ?? '';
      expect(linksIn(index)).toBe(500 + 100);
      const page = files.get('p499.html')?.content.toString() ?? '';
      expect(linksIn(page)).toBe(100);
      expect(page).toContain('<a href="/p099">');
      expect(page).not.toContain('<a href="/p100">');
    } finally {
      await rm(docs, { recursive: true, force: true });
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe('a site exported for a base path', () => {
  it("prefixes the pages' own absolute links too, not relative, external or protocol-relative ones", async () => {
    const docs = await mkdtemp(join(tmpdir(), 'sim-based-'));
    const work = await mkdtemp(join(tmpdir(), 'sim-based-work-'));
    try {
      await writeFile(
        join(docs, 'index.md'),
        '# Home\n\n[Install](/guides/install) [next](guides/install.md) [out](https://acme.dev/x) ' +
          '[cdn](//cdn.acme.dev/a.js) ![logo](/img/logo.png)\n',
      );
      await mkdir(join(docs, 'guides'));
      await writeFile(join(docs, 'guides', 'install.md'), '# Install\n');
      await renderBundle({
        docsDir: docs,
        domain: 'docs.acme.dev',
        workDir: work,
        mtime: new Date(0),
        basePath: '/documentation',
      });
      const files = await untar(await readFile(join(work, 'bundle.tar.gz')));
      expect([...files.keys()]).toContain('guides/install.html');
      const index = files.get('index.html')?.content.toString() ?? '';
      expect(index).toContain('<a href="/documentation/guides/install">Install</a>');
      expect(index).toContain('<a href="guides/install">next</a>');
      expect(index).toContain('<a href="https://acme.dev/x">out</a>');
      expect(index).toContain('<a href="//cdn.acme.dev/a.js">cdn</a>');
      expect(index).toContain('<img src="/documentation/img/logo.png"');
      expect(index).toContain('<a class="brand" href="/documentation/">');
    } finally {
      await rm(docs, { recursive: true, force: true });
      await rm(work, { recursive: true, force: true });
    }
  });
});
