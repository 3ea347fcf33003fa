// `static-export mirror push|save|load|sync` through the real CLI against the simulator and a real
// Distribution registry; the results read back by skopeo.
import { cp, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../../scripts/run-process.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { ANNOTATIONS } from '../../../src/oci/image.ts';
import type { RegistryClient } from '../../../src/oci/registry.ts';
import { DEFAULT_DOCS_DIR, type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { tarGz } from '../../support/fixtures/tar-fixtures.ts';
import { type MirrorStack, startMirrorStack } from '../../support/servers/mirror-stack.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';
import { fastClock, fastClockEnv } from '../../support/tools/fast-clock.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';

let stack: MirrorStack | undefined;
let work: string;
let sim: Simulator;
let registry: TestRegistry;
let client: RegistryClient;

beforeAll(async () => {
  stack = await startMirrorStack('mirror-oci-test-');
  ({ work, sim, registry, client } = stack);
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(() => stack?.close());

// Each test runs the CLI several times (a process start is seconds on a busy machine).
const SLOW = { timeout: 240_000 };

function lastEvent(stdout: string, name: string): Record<string, unknown> {
  const found = jsonEvents(stdout, name);
  expect(found.length, `no ${name} event in ${stdout}`).toBeGreaterThan(0);
  return found[found.length - 1] as Record<string, unknown>;
}

/** `mirror push` of `source` into `oci://<registry>/<group>/<repository>` as `domain`, printing JSON. */
const pushInto = (group: string, domain: string) => (source: string[], repository: string) =>
  runCli([
    'mirror',
    'push',
    ...source,
    '--to',
    `oci://${registry.host}/${group}/${repository}`,
    '--domain',
    domain,
    '--json',
  ]);

/** The site of a bundle file, as `fetch` extracts it into `site`. */
async function extracted(archive: string, site: string): Promise<void> {
  const fetched = await runCli(['fetch', '--dest', site], { STATIC_EXPORT_BUNDLE_URL: `file://${archive}` });
  expect(fetched.code, fetched.stderr).toBe(0);
}

describe('mirror push', SLOW, () => {
  it('pushes a bundle link as an image, tags it, and pushes nothing the second time', async () => {
    const bundle = await exportBundle(sim, 'docs.example.com');
    const to = `oci://${registry.host}/docs/docs.example.com`;
    const args = ['mirror', 'push', '--to', to, '--domain', 'docs.example.com', '--tag', 'latest', '--json'];
    const first = await runCli([...args, '--export-job-id', bundle.jobId], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(first.code, first.stderr).toBe(0);
    const pushed = lastEvent(first.stdout, 'pushed');
    expect(pushed).toMatchObject({ pushed: true, uploaded: 2, moved: ['latest'] });
    const version = pushed.version as string;
    expect(version).toMatch(/^sha256-[0-9a-f]{64}$/);
    // The presigned link never reaches the output.
    expect(first.stdout + first.stderr).not.toContain(new URL(bundle.bundleUrl).search);

    const inspect = await runProcess('skopeo', [
      'inspect',
      '--tls-verify=false',
      `docker://${registry.host}/docs/docs.example.com:latest`,
    ]);
    const info = JSON.parse(inspect.stdout) as { Digest: string; Labels: Record<string, string> };
    expect(info.Digest).toBe(pushed.digest);
    expect(info.Labels).toMatchObject({
      [ANNOTATIONS.version]: version,
      [ANNOTATIONS.domain]: 'docs.example.com',
      [ANNOTATIONS.exportJobId]: bundle.jobId,
      [ANNOTATIONS.title]: 'docs.example.com',
    });
    expect(Number(info.Labels[ANNOTATIONS.pageCount])).toBeGreaterThan(0);

    const again = await exportBundle(sim, 'docs.example.com');
    const second = await runCli(args, { STATIC_EXPORT_BUNDLE_URL: again.bundleUrl });
    expect(second.code, second.stderr).toBe(0);
    expect(lastEvent(second.stdout, 'pushed')).toMatchObject({
      pushed: false,
      uploaded: 0,
      moved: [],
      digest: pushed.digest,
    });
  });

  it('gives the same layer from a bundle file and from the extracted site as from the link', async () => {
    const bundle = await exportBundle(sim, 'files.example.com');
    const archive = join(work, 'files.tar.gz');
    const res = await fetch(bundle.bundleUrl);
    await writeFile(archive, Buffer.from(await res.arrayBuffer()));
    const push = pushInto('files', 'files.example.com');
    const fromFile = await push(['--bundle', archive], 'a');
    expect(fromFile.code, fromFile.stderr).toBe(0);
    const site = join(work, 'files-site');
    await extracted(archive, site);
    const fromSite = await push(['--site', site], 'b');
    expect(fromSite.code, fromSite.stderr).toBe(0);
    const a = lastEvent(fromFile.stdout, 'pushed');
    const b = lastEvent(fromSite.stdout, 'pushed');
    expect(b.version).toBe(a.version);
    // Same content and metadata: the same manifest, so the same digest.
    expect(b.digest).toBe(a.digest);
  });

  it('asks the registry before packaging a site it read first: an unchanged version is not packaged again', async () => {
    const site = join(work, 'unchanged-site');
    await mkdir(join(site, 'guide'), { recursive: true });
    await writeFile(join(site, 'index.html'), '<h1>Home</h1>');
    await writeFile(join(site, 'guide', 'index.html'), '<h1>Guide</h1>');
    // Plain output (no --json): each step is a line on stderr.
    const push = () =>
      runCli([
        'mirror',
        'push',
        '--site',
        site,
        '--to',
        `oci://${registry.host}/unchanged/site`,
        '--domain',
        'unchanged.example.com',
      ]);
    const first = await push();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('packaging');
    expect(first.stderr).toMatch(/Pushed version sha256-/);
    const second = await push();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('packaging');
    expect(second.stderr).toMatch(/is already in .*nothing pushed/);
  });

  it('gives the same image from a bundle listing its files out of order (extracted instead, with a warning)', async () => {
    const archive = join(work, 'unordered.tar.gz');
    await writeFile(
      archive,
      tarGz([
        { path: 'z/last.html', content: '<p>z</p>' },
        { path: 'index.html', content: '<h1>Home</h1>' },
        { path: 'a/first.html', content: '<p>a</p>' },
      ]),
    );
    const push = pushInto('unordered', 'unordered.example.com');
    const fromBundle = await push(['--bundle', archive], 'a');
    expect(fromBundle.code, fromBundle.stderr).toBe(0);
    expect(fromBundle.stderr).toContain('out of the layer order');
    const site = join(work, 'unordered-site');
    await extracted(archive, site);
    const fromSite = await push(['--site', site], 'b');
    expect(fromSite.code, fromSite.stderr).toBe(0);
    const a = lastEvent(fromBundle.stdout, 'pushed');
    expect(a).toMatchObject({ pushed: true, uploaded: 2 });
    expect(lastEvent(fromSite.stdout, 'pushed').digest).toBe(a.digest);
  });

  it.each([
    [['--to', 'oci://r.example/a'], /give only one of --url, --bundle or --site|--url is required/],
    [
      ['--to', 'docker://r.example/a', '--site', '.'],
      /--to "docker:\/\/r.example\/a" does not start with oci:\/\//,
    ],
    [['--to', 'oci://r.example/a:tag', '--site', '.'], /--to names a repository/],
    [['--to', 'oci://r.example/a', '--site', '/proc/version'], /--site \/proc\/version is not a directory/],
    [['--to', 'oci://r.example/a', '--site', '.', '--tag', 'bad tag'], /--tag.*expected a tag/],
  ])('refuses bad input %j with exit 2, naming the flag', async (extra, why) => {
    const result = await runCli(['mirror', 'push', '--domain', 'docs.example.com', ...extra]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(why);
  });

  it('refuses a site without index.html with exit 5 (the publish gate of fetch)', async () => {
    const site = join(work, 'no-index');
    await mkdir(site);
    await writeFile(join(site, 'page.html'), '<p>orphan</p>');
    const result = await runCli([
      'mirror',
      'push',
      '--site',
      site,
      '--to',
      `oci://${registry.host}/gate/site`,
      '--domain',
      'docs.example.com',
    ]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(/refused.*index\.html/);
    expect(await client.listTags('gate/site')).toEqual([]);
  });

  it('exits 3 without credentials for a registry that wants them, and never shows a password', async () => {
    const user = { username: 'pusher', password: 'pusher-secret-password-7' };
    const secured = await startRegistry({ user });
    try {
      const site = join(work, 'auth-site');
      await mkdir(site);
      await writeFile(join(site, 'index.html'), '<h1>auth</h1>');
      const base = [
        'mirror',
        'push',
        '--site',
        site,
        '--to',
        `oci://${secured.host}/private/site`,
        '--domain',
        'docs.example.com',
      ];
      const anonymous = await runCli(base);
      expect(anonymous.code, anonymous.stderr).toBe(3);
      expect(anonymous.stderr).toMatch(/wants credentials/);

      const wrong = await runCli(base, {
        STATIC_EXPORT_REGISTRY_USERNAME: 'pusher',
        STATIC_EXPORT_REGISTRY_PASSWORD: 'wrong-password-0000',
      });
      expect(wrong.code, wrong.stderr).toBe(3);
      expect(wrong.stderr).not.toContain('wrong-password-0000');

      // From a Podman-style auth file.
      const authFile = join(work, 'auth.json');
      const auth = Buffer.from(`${user.username}:${user.password}`).toString('base64');
      await writeFile(authFile, JSON.stringify({ auths: { [secured.host]: { auth } } }));
      const ok = await runCli([...base, '--json'], { REGISTRY_AUTH_FILE: authFile });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout + ok.stderr).not.toContain(user.password);
      // An empty username variable (an optional Secret key left empty) counts as unset: the auth file answers.
      const emptyUser = await runCli([...base, '--json'], {
        REGISTRY_AUTH_FILE: authFile,
        STATIC_EXPORT_REGISTRY_USERNAME: '',
      });
      expect(emptyUser.code, emptyUser.stderr).toBe(0);
      // And from the environment.
      const env = await runCli([...base, '--json'], {
        STATIC_EXPORT_REGISTRY_USERNAME: user.username,
        STATIC_EXPORT_REGISTRY_PASSWORD: user.password,
      });
      expect(env.code, env.stderr).toBe(0);
      expect(lastEvent(env.stdout, 'pushed').pushed).toBe(false);
    } finally {
      await secured.close();
    }
  });

  it('keeps the newest N versions with --keep and deletes the rest', async () => {
    const to = `oci://${registry.host}/keep/site`;
    const versions: string[] = [];
    for (const [i, created] of [
      '2026-01-01T00:00:00Z',
      '2026-01-02T00:00:00Z',
      '2026-01-03T00:00:00Z',
    ].entries()) {
      const site = join(work, `keep-${i}`);
      await mkdir(site);
      await writeFile(join(site, 'index.html'), `<h1>v${i}</h1>`);
      const result = await runCli([
        'mirror',
        'push',
        '--site',
        site,
        '--to',
        to,
        '--domain',
        'docs.example.com',
        '--created',
        created,
        '--tag',
        'latest',
        '--keep',
        '2',
        '--json',
      ]);
      expect(result.code, result.stderr).toBe(0);
      versions.push(lastEvent(result.stdout, 'pushed').version as string);
      if (i === 2) expect(lastEvent(result.stdout, 'pushed').pruned).toEqual([versions[0]]);
    }
    const tags = await client.listTags('keep/site');
    expect(tags.sort()).toEqual([versions[1], versions[2], 'latest'].sort());
  });
});

describe('mirror save and load', SLOW, () => {
  it('writes an OCI layout archive that load and skopeo push, and reads skopeo archives back', async () => {
    const bundle = await exportBundle(sim, 'carry.example.com');
    const archive = join(work, 'site.tar');
    const saved = await runCli(
      ['mirror', 'save', '--to', archive, '--domain', 'carry.example.com', '--json'],
      {
        STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
      },
    );
    expect(saved.code, saved.stderr).toBe(0);
    const { digest, version } = lastEvent(saved.stdout, 'saved') as { digest: string; version: string };

    // Saving the same content again gives the same archive bytes.
    const again = join(work, 'site-again.tar');
    const second = await runCli(['mirror', 'save', '--to', again, '--domain', 'carry.example.com'], {
      STATIC_EXPORT_BUNDLE_URL: (await exportBundle(sim, 'carry.example.com')).bundleUrl,
    });
    expect(second.code, second.stderr).toBe(0);
    expect((await readFile(again)).equals(await readFile(archive))).toBe(true);

    const loaded = await runCli([
      'mirror',
      'load',
      archive,
      '--to',
      `oci://${registry.host}/inside/carry:latest`,
      '--json',
    ]);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(lastEvent(loaded.stdout, 'loaded')).toMatchObject({ digest, tags: [version, 'latest'] });
    expect((await client.resolve('inside/carry', 'latest'))?.digest).toBe(digest);

    // skopeo reads the same archive (keeping digests, so signatures stay valid).
    const copied = await runProcess('skopeo', [
      'copy',
      '--preserve-digests',
      '--dest-tls-verify=false',
      `oci-archive:${archive}`,
      `docker://${registry.host}/inside/skopeo:${version}`,
    ]);
    expect(copied.code, copied.stderr).toBe(0);
    expect((await client.resolve('inside/skopeo', version))?.digest).toBe(digest);

    // An archive skopeo wrote (compressed layer) loads too, and unpacks to the same content.
    const skopeoArchive = join(work, 'from-skopeo.tar');
    const out = await runProcess('skopeo', [
      'copy',
      '--src-tls-verify=false',
      `docker://${registry.host}/inside/carry:latest`,
      `oci-archive:${skopeoArchive}:mytag`,
    ]);
    expect(out.code, out.stderr).toBe(0);
    const reloaded = await runCli([
      'mirror',
      'load',
      skopeoArchive,
      '--to',
      `oci://${registry.host}/inside/reloaded`,
      '--json',
    ]);
    expect(reloaded.code, reloaded.stderr).toBe(0);
    expect(lastEvent(reloaded.stdout, 'loaded').tags).toEqual([version, 'mytag']);
    const layout = join(work, 'reloaded-layout');
    const pulled = await runProcess('skopeo', [
      'copy',
      '--src-tls-verify=false',
      `docker://${registry.host}/inside/reloaded:mytag`,
      `oci:${layout}:x`,
    ]);
    expect(pulled.code, pulled.stderr).toBe(0);
    const bundleDir = join(work, 'reloaded-bundle');
    const unpacked = await runProcess('umoci', ['unpack', '--rootless', '--image', `${layout}:x`, bundleDir]);
    expect(unpacked.code, unpacked.stderr).toBe(0);
    expect((await contentVersion(join(bundleDir, 'rootfs'))).version).toBe(version);
  });

  it('refuses an archive whose layer bytes were altered with exit 5, naming the digest, and tags nothing', async () => {
    const site = join(work, 'altered-site');
    await mkdir(site, { recursive: true });
    await writeFile(join(site, 'index.html'), '<h1>Altered</h1>');
    const archive = join(work, 'altered.tar');
    const saved = await runCli([
      'mirror',
      'save',
      '--site',
      site,
      '--domain',
      'altered.example.com',
      '--to',
      archive,
    ]);
    expect(saved.code, saved.stderr).toBe(0);
    // One byte of the layer (the largest blob) changed, its name (the digest) kept.
    const unpacked = join(work, 'altered-unpacked');
    await mkdir(unpacked);
    expect((await runProcess('tar', ['-xf', archive, '-C', unpacked])).code).toBe(0);
    const blobs = join(unpacked, 'blobs', 'sha256');
    const sized = await Promise.all(
      (await readdir(blobs)).map(async (name) => ({ name, size: (await stat(join(blobs, name))).size })),
    );
    const layer = sized.sort((a, b) => b.size - a.size)[0]?.name ?? '';
    const bytes = await readFile(join(blobs, layer));
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    await writeFile(join(blobs, layer), bytes);
    expect(
      (await runProcess('tar', ['-cf', archive, '-C', unpacked, 'oci-layout', 'index.json', 'blobs'])).code,
    ).toBe(0);

    const result = await runCli([
      'mirror',
      'load',
      archive,
      '--to',
      `oci://${registry.host}/inside/altered:latest`,
    ]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toContain(`sha256:${layer}`);
    expect(result.stderr).toMatch(/DIGEST_INVALID/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await client.resolve('inside/altered', 'latest')).toBeUndefined();
  });

  it('refuses a file that is not an OCI layout archive with exit 5', async () => {
    const bogus = join(work, 'bogus.tar');
    await writeFile(bogus, Buffer.alloc(2048, 1));
    const result = await runCli(['mirror', 'load', bogus, '--to', `oci://${registry.host}/x/y`]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toMatch(/not an \(uncompressed\) OCI layout archive/);
  });
});

describe('mirror sync', SLOW, () => {
  it('exports and pushes many domains, then pushes nothing for unchanged ones, then only what changed', async () => {
    const config = join(work, 'mirror.yaml');
    await writeFile(
      config,
      [
        `target: oci://${registry.host}/sync`,
        'keep: 1',
        'domains:',
        '  - a.example.com',
        '  - b.example.com',
        `  - domain: c.example.com`,
        `    repository: oci://${registry.host}/custom/c`,
      ].join('\n'),
    );
    const env = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
    const first = await runCli(
      ['mirror', 'sync', '--config', config, '--json', '--poll-interval', '100ms'],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(lastEvent(first.stdout, 'summary')).toMatchObject({
      domains: 3,
      pushed: 3,
      unchanged: 0,
      failed: 0,
    });
    expect(first.stdout).not.toContain(sim.adminKey);
    const cTags = await client.listTags('custom/c');
    expect(cTags).toContain('latest');

    const second = await runCli(
      ['mirror', 'sync', '--config', config, '--json', '--poll-interval', '100ms'],
      env,
    );
    expect(second.code, second.stderr).toBe(0);
    expect(lastEvent(second.stdout, 'summary')).toMatchObject({ pushed: 0, unchanged: 3, uploaded: 0 });

    // New docs: every domain gets a new version; keep: 1 prunes the old ones.
    const docs = join(work, 'sync-docs');
    await cp(DEFAULT_DOCS_DIR, docs, { recursive: true });
    await writeFile(join(docs, 'index.md'), '# Changed\n\nNew content.\n');
    sim.configure({ docsDir: docs });
    try {
      const third = await runCli(
        ['mirror', 'sync', '--config', config, '--json', '--poll-interval', '100ms'],
        env,
      );
      expect(third.code, third.stderr).toBe(0);
      expect(lastEvent(third.stdout, 'summary')).toMatchObject({ pushed: 3, pruned: 3 });
      const tags = await client.listTags('sync/a.example.com');
      expect(tags.filter((t) => t.startsWith('sha256-'))).toHaveLength(1);
      const latest = await client.getManifest('sync/a.example.com', 'latest');
      const annotations = JSON.parse(latest?.bytes.toString() ?? '{}').annotations;
      expect(tags).toContain(annotations[ANNOTATIONS.version]);
    } finally {
      sim.configure({ docsDir: DEFAULT_DOCS_DIR });
    }
  });

  it('keeps 50 domains within --api-requests-per-minute in every minute the platform counts', async () => {
    // On a clock SPEED times faster in the CLI and the simulator alike: the minutes of waiting for
    // slots pass in seconds, and the simulator's request log counts them on the same clock.
    const SPEED = 6;
    const LIMIT = 30;
    const domains = Array.from({ length: 50 }, (_, i) => `b${i}.example.com`);
    const fast = await startSimulator({
      exportDurationMs: 20_000,
      clock: fastClock(SPEED),
      requestsPerMinute: LIMIT,
    });
    try {
      const config = join(work, 'mirror-budget.yaml');
      await writeFile(config, `target: oci://${registry.host}/budget\ndomains: [${domains.join(', ')}]\n`);
      const result = await runCli(
        ['mirror', 'sync', '--config', config, '--json', '--api-requests-per-minute', String(LIMIT)],
        { STATIC_EXPORT_API_URL: fast.baseUrl, STATIC_EXPORT_API_KEY: fast.adminKey, ...fastClockEnv(SPEED) },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(lastEvent(result.stdout, 'summary')).toMatchObject({ domains: 50, failed: 0 });
      const calls = fast.requests.filter((r) => ['start', 'status', 'bundle'].includes(r.endpoint));
      expect(calls.filter((c) => c.endpoint === 'start')).toHaveLength(50);
      // Five times the limit at least: the limiter had to hold requests back for minutes.
      expect(calls.length).toBeGreaterThanOrEqual(150);
      const perMinute = calls.map(
        (c) => calls.filter((o) => o.time >= c.time && o.time < c.time + 60_000).length,
      );
      expect(Math.max(...perMinute)).toBeLessThanOrEqual(LIMIT);
      expect(calls.filter((c) => c.status === 429)).toEqual([]);
      // The progress-aware schedule: a fixed 2 s interval over 20 s exports would poll ten times each.
      expect(calls.filter((c) => c.endpoint === 'status').length).toBeLessThanOrEqual(domains.length * 3);
    } finally {
      await fast.close();
    }
  });

  it('goes on with the other domains when one export fails, and exits 4', async () => {
    const config = join(work, 'mirror-fail.yaml');
    await writeFile(
      config,
      `target: oci://${registry.host}/failing\ndomains: [fail.example.com, ok.example.com]\n`,
    );
    const env = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
    const result = await runCli(
      ['mirror', 'sync', '--config', config, '--json', '--poll-interval', '100ms'],
      env,
    );
    expect(result.code, result.stderr).toBe(4);
    expect(lastEvent(result.stdout, 'summary')).toMatchObject({ pushed: 1, failed: 1 });
    expect(lastEvent(result.stdout, 'failed')).toMatchObject({ domain: 'fail.example.com' });
    expect(lastEvent(result.stdout, 'error').message).toMatch(
      /1 of 2 domain\(s\) failed \(fail.example.com\)/,
    );
  });

  it.each([
    ['domains: [docs.example.com]\n', /target Invalid input|target/],
    ['target: oci://r.example/x\ndomains: [https://docs.example.com]\n', /domains\.0 .*bare lowercase host/],
    ['target: oci://r.example/x\nkeep: 0\ndomains: [a.example.com]\n', /keep/],
    ['target: oci://r.example/x\ndomains: [a.example.com, a.example.com]\n', /listed twice/],
    ['target: oci://r.example/x\napiKey: abc\ndomains: [a.example.com]\n', /apiKey|Unrecognized key/],
  ])('refuses a bad mirror.yaml (%j) with exit 2, naming the field', async (text, why) => {
    const config = join(work, `bad-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(config, text);
    const result = await runCli(['mirror', 'sync', '--config', config], {
      STATIC_EXPORT_API_URL: sim.baseUrl,
      STATIC_EXPORT_API_KEY: sim.adminKey,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(why);
  });
});
