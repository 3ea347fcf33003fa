// The pod, outside a cluster: the init container's rendered command fetches an export from the
// simulator into the site volume, then real nginx serves it with the chart's rendered config.
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentVersion } from '../../../src/bundle/version.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';
import {
  findObject,
  freePort,
  helmTemplate,
  inlineValues,
  type KubeObject,
  podSpec,
  type RunningNginx,
  renderedSecrets,
  runInitContainer,
  scratchDir,
  siteDocs,
  startNginx,
} from '../../support/tools/chart.ts';

const execFileAsync = promisify(execFile);

let sim: Simulator;
let work: string;
let bundleUrl: string;
let objects: KubeObject[];
let nginx: RunningNginx;

async function render(values: object): Promise<KubeObject[]> {
  const result = await helmTemplate('helm4', values);
  expect(result.stderr).toBe('');
  return result.objects;
}

async function siteMount(name: string): Promise<string> {
  const dir = join(work, name);
  // An emptyDir starts empty and writable for the pod's users.
  await mkdir(dir, { mode: 0o777 });
  await chmod(dir, 0o777);
  return dir;
}

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 0, docsDir: await siteDocs() });
  ({ bundleUrl } = await exportBundle(sim));
  work = await scratchDir('serve-');
  await chmod(work, 0o755);
  const port = await freePort();
  objects = await render(
    inlineValues(bundleUrl, {
      deploymentKind: 'airGapped',
      siteMountPath: await siteMount('www'),
      containerPort: port,
    }),
  );
  const init = await runInitContainer(objects, renderedSecrets(objects));
  expect(init.code, init.stderr).toBe(0);
  // What the init container logs never carries the link.
  expect(init.stdout + init.stderr).not.toContain(new URL(bundleUrl).search);
  nginx = await startNginx(objects, port);
  // The CLI's start and a download on a busy 2-core machine outlast the default 10 s.
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await sim?.close();
});

describe('the init container (rendered command, env from the Secret)', () => {
  it('fills the site directory inside the volume, not the mount point', async () => {
    const mount = podSpec(objects).initContainers[0].volumeMounts[0].mountPath as string;
    expect(await readdir(mount)).toEqual(['site']);
    expect(await readdir(join(mount, 'site'))).toEqual(
      expect.arrayContaining(['index.html', '404.html', 'getting-started.html', 'guides', 'assets']),
    );
  });

  it('reads link and version from an existing Secret, and refuses content of another version', async () => {
    const { version } = await contentVersion(join(work, 'www/site'));
    const values = (mount: string) => ({
      staticExport: { enabled: true, existingSecret: 'docs-site-values' },
      siteMountPath: mount,
    });
    const good = await render(values(await siteMount('existing')));
    const ok = await runInitContainer(good, { 'docs-site-values': { bundleUrl, version } });
    expect(ok.code, ok.stderr).toBe(0);
    expect((await contentVersion(join(work, 'existing/site'))).version).toBe(version);
    expect(ok.stdout + ok.stderr).not.toContain(new URL(bundleUrl).search);

    const bad = await render(values(await siteMount('other')));
    const refused = await runInitContainer(bad, {
      'docs-site-values': { bundleUrl, version: `sha256-${'0'.repeat(64)}` },
    });
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain(version);
    expect(refused.stderr).not.toContain(new URL(bundleUrl).search);
    expect(await readdir(join(work, 'other'))).not.toContain('site');
  });
});

describe('the init container refuses a site that fails its check', () => {
  it('fewer pages than staticExport.fetch.minPages: exit 5, the volume stays empty', async () => {
    const mount = await siteMount('thin');
    const thin = await render(
      inlineValues(bundleUrl, { siteMountPath: mount, staticExport: { fetch: { minPages: 100 } } }),
    );
    const refused = await runInitContainer(thin, renderedSecrets(thin));
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('100');
    expect(await readdir(mount)).toEqual([]);
  });
});

describe('nginx with the rendered config', () => {
  it('serves the home page and extensionless pages, nested ones too', async () => {
    for (const [path, title] of [
      ['/', '<title>'],
      ['/getting-started', '<title>Getting started'],
      ['/guides/install', '<title>Install'],
    ] as const) {
      const res = await fetch(`${nginx.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text(), path).toContain(title);
    }
  });

  it('answers a missing page with 404 and the bundle’s own 404 page', async () => {
    const res = await fetch(`${nginx.baseUrl}/no/such/page`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Page not found');
  });

  it('does not serve dot files such as fetch’s marker', async () => {
    for (const path of ['/.static-export', '/assets/.hidden.0123456789ab.js']) {
      const res = await fetch(`${nginx.baseUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toContain('Page not found');
    }
  });

  it('caches pages briefly, assets longer and hashed assets for good', async () => {
    const page = await fetch(`${nginx.baseUrl}/getting-started`);
    expect(page.headers.get('cache-control')).toBe('public, max-age=60, must-revalidate');
    const css = await fetch(`${nginx.baseUrl}/assets/site.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css');
    expect(css.headers.get('cache-control')).toBe('public, max-age=3600');
    const hashed = await fetch(`${nginx.baseUrl}/assets/app.3f9a2c1b7d.js`);
    expect(hashed.status).toBe(200);
    expect(await hashed.text()).toContain('hashed asset');
    expect(hashed.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${nginx.baseUrl}/assets/missing.0123456789.js`)).status).toBe(404);
  });

  it('compresses text', async () => {
    const res = await fetch(`${nginx.baseUrl}/`, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
  });

  it('sends the security headers and an air-gapped CSP on every answer, errors included', async () => {
    for (const path of ['/', '/assets/app.3f9a2c1b7d.js', '/no/such/page']) {
      const { headers } = await fetch(`${nginx.baseUrl}${path}`);
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('x-frame-options'), path).toBe('SAMEORIGIN');
      expect(headers.get('referrer-policy'), path).toBe('strict-origin-when-cross-origin');
      expect(headers.get('permissions-policy'), path).toContain('camera=()');
      const csp = headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("connect-src 'self';");
      expect(csp, path).toContain("img-src 'self' data:;");
      expect(csp, path).not.toMatch(/https?:/);
      expect(headers.get('server'), path).toBe('nginx');
    }
  });

  it('passes the `helm test` pod’s script (run locally against nginx instead of the Service)', async () => {
    const pod = findObject(objects, 'Pod');
    expect(pod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const [shell, ...args] = pod.spec.containers[0].command as string[];
    const service = 'http://docs-static-export-site:80';
    expect(args.join(' ')).toContain(service);
    const local = args.map((a) => a.replace(service, nginx.baseUrl));
    const passed = await execFileAsync(shell as string, local);
    expect(passed.stdout).toBe('GET /\nGET /index\n');
    // A missing page fails it.
    await expect(execFileAsync(shell as string, [...local, '/no/such/page'])).rejects.toThrow();
  });

  it('answers the liveness probe', async () => {
    const res = await fetch(`${nginx.baseUrl}/_healthz`);
    expect(res.status).toBe(200);
  });

  it('shuts down gracefully: the preStop hook keeps serving for the delay, then waits for nginx to quit', async () => {
    const port = await freePort();
    const own = await render(
      inlineValues(bundleUrl, {
        siteMountPath: join(work, 'www'),
        containerPort: port,
        shutdownDelaySeconds: 1,
      }),
    );
    const server = await startNginx(own, port);
    const [shell, ...args] = podSpec(own).containers[0].lifecycle.preStop.exec.command as string[];
    const preStop = execFileAsync(shell as string, args.map(server.local));
    // Still serving while the endpoint would be removed from the Service.
    expect((await fetch(`${server.baseUrl}/getting-started`)).status).toBe(200);
    await preStop;
    expect(await server.exited).toBe(0);
    await expect(fetch(`${server.baseUrl}/`)).rejects.toThrow();
  });
});
