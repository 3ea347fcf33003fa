// Real nginx with the site chart's rendered config, its root on the sync's `current` symlink, while
// the sync store swaps versions under it: nginx resolves the symlink on every request (no
// open_file_cache, disable_symlinks off by default), so each response is wholly one version.

import { chmod } from 'node:fs/promises';
import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bundle, syncer } from '../../support/fixtures/sync-fixtures.ts';
import {
  findObject,
  freePort,
  helmTemplate,
  inlineValues,
  type KubeObject,
  scratchDir,
  startNginx,
} from '../../support/tools/chart.ts';

/** A page and a large asset made only of `label`'s marker: a response torn across versions shows two. */
const site = (label: string) =>
  bundle(label, 2, [
    { path: 'assets/', type: 'dir' },
    { path: 'assets/site.css', content: `/*${label}*/`.repeat(40_000) },
  ]);

/** One GET on a connection of its own: its status and body, or why there was none. */
function read(url: string): Promise<{ status: number | string; body: string }> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (e) => resolve({ status: e.message, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ status: e.message, body: '' }));
  });
}

/** The versions a body shows (by label). */
const labelsIn = (body: string) =>
  new Set([...body.matchAll(/(?:<h1>|<p>|\/\*)(old|new)\b/g)].map((m) => m[1] as string));

/** The chart rendered for a site volume at `mount`, nginx's root on the sync's `current` symlink. */
async function syncSite(): Promise<{
  mount: string;
  port: number;
  objects: KubeObject[];
  config: { 'nginx.conf': string };
}> {
  const mount = await scratchDir('sync-mount-');
  await chmod(mount, 0o755);
  const port = await freePort();
  const { objects, stderr } = await helmTemplate(
    'helm4',
    inlineValues('https://cdn.example.com/bundle.tar.gz', { siteMountPath: mount, containerPort: port }),
  );
  expect(stderr).toBe('');
  // What the chart renders with sync on: nginx's root is the symlink.
  const config = (findObject(objects, 'ConfigMap') as KubeObject & { data: { 'nginx.conf': string } }).data;
  expect(config['nginx.conf']).toContain(`root ${mount}/site;`);
  expect(config['nginx.conf']).not.toMatch(/open_file_cache|disable_symlinks/);
  config['nginx.conf'] = config['nginx.conf'].replace(`root ${mount}/site;`, `root ${mount}/current;`);
  return { mount, port, objects, config };
}

describe('nginx serving the sync root while versions are swapped', () => {
  it('answers every request with one whole version: 0 errors, 0 mixed responses', async () => {
    const { mount, port, objects } = await syncSite();
    const { store, syncer: s } = syncer(mount);
    await store.prepare();
    const [older, newer] = [await site('old'), await site('new')];
    const signal = new AbortController().signal;
    await s.syncTo(older, signal);
    await s.syncTo(newer, signal);
    const nginx = await startNginx(objects, port);

    let swapping = true;
    const swaps = (async () => {
      for (let i = 0; i < 200; i++) {
        await store.swap(i % 2 ? newer.version : older.version);
        await new Promise((r) => setTimeout(r, 2));
      }
      swapping = false;
    })();
    const failed: string[] = [];
    let mixed = 0;
    let responses = 0;
    const seen = new Set<string>();
    const client = async () => {
      while (swapping) {
        for (const path of ['/', '/page1', '/assets/site.css']) {
          const { status, body } = await read(`${nginx.baseUrl}${path}`);
          responses++;
          if (status !== 200) failed.push(`${path}: ${status}`);
          const labels = labelsIn(body);
          if (labels.size !== 1) mixed++;
          for (const l of labels) seen.add(l);
        }
      }
    };
    await Promise.all([swaps, client(), client()]);
    await nginx.stop();
    expect(failed).toEqual([]);
    expect(mixed).toBe(0);
    expect(responses).toBeGreaterThan(30);
    // Both versions were served during the run: the swaps were visible to nginx.
    expect([...seen].sort()).toEqual(['new', 'old']);
  }, 60_000);

  it('serves a page read before the swap its hashed scripts, styles, fonts and images from ROOT/previous, never cached for good, and never a page', async () => {
    const older = await bundle('old', 2, [
      // A page taken down in the new version, named like a hashed file.
      { path: 'notes-20240115.html', content: '<p>old notes</p>' },
      { path: 'assets/', type: 'dir' },
      ...[
        'app.1111aaaa.js',
        'site.1111aaaa.css',
        'font.1111aaaa.woff2',
        'logo.1111aaaa.png',
        'data.1111aaaa.json',
      ].map((name) => ({ path: `assets/${name}`, content: `/*old ${name}*/` })),
    ]);
    const newer = await bundle('new', 2, [
      { path: 'changes-20240301.html', content: '<p>new changes</p>' },
      { path: 'assets/', type: 'dir' },
      { path: 'assets/app.2222bbbb.js', content: '/*new*/' },
    ]);
    // The chart as it renders with sync on: nginx's root is ROOT/current, its fallback ROOT/previous.
    const mount = await scratchDir('sync-mount-');
    await chmod(mount, 0o755);
    const port = await freePort();
    const { objects, stderr } = await helmTemplate('helm4', {
      staticExport: { enabled: true, existingSecret: 'docs-values', sync: { enabled: true } },
      siteMountPath: mount,
      containerPort: port,
    });
    expect(stderr).toBe('');
    const { store, syncer: s } = syncer(mount);
    await store.prepare();
    const signal = new AbortController().signal;
    await s.syncTo(older, signal);
    await s.syncTo(newer, signal);
    const nginx = await startNginx(objects, port);
    const get = async (path: string) => {
      const res = await fetch(`${nginx.baseUrl}${path}`);
      return { status: res.status, body: await res.text(), cacheControl: res.headers.get('cache-control') };
    };

    for (const name of ['app.1111aaaa.js', 'site.1111aaaa.css', 'font.1111aaaa.woff2', 'logo.1111aaaa.png']) {
      // The old version's file, for this moment only: caches ask again before reusing it.
      expect(await get(`/assets/${name}`), name).toEqual({
        status: 200,
        body: `/*old ${name}*/`,
        cacheControl: 'no-cache',
      });
    }
    // A page taken down is gone at the swap, whatever its name looks like; so is any other file.
    expect((await get('/notes-20240115.html')).status).toBe(404);
    expect((await get('/notes-20240115')).status).toBe(404);
    expect((await get('/assets/data.1111aaaa.json')).status).toBe(404);
    expect((await get('/assets/app.3333cccc.js')).status).toBe(404);
    // The version served now: its hashed asset cached for good, a page named like one cached as a page.
    expect(await get('/assets/app.2222bbbb.js')).toEqual({
      status: 200,
      body: '/*new*/',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    expect(await get('/changes-20240301.html')).toEqual({
      status: 200,
      body: '<p>new changes</p>',
      cacheControl: 'public, max-age=60, must-revalidate',
    });
    await nginx.stop();
  }, 60_000);
});
