// The container image itself, not the sources: built by `npm run image` (buildah, offline Node 24
// base), unpacked with umoci, and its entrypoint run in the unpacked root as uid 65532 (chroot):
// --version, --help, `fetch` from the simulator and `operator` against the control plane.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  chownSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtImage, imageToolsMissing } from '../../scripts/image/built.ts';
import { localOperatorArgs } from '../../scripts/operator-args.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import {
  createNamespace,
  eventually,
  installCrds,
  kubectl,
  kubectlOk,
  type RunResult,
  run,
} from '../support/cluster/kube.ts';
import { ADMIN_KEY_SECRET, applyRelease, applySecret, getRelease } from '../support/cluster/resources.ts';
import { exportBundle } from '../support/servers/sim-export.ts';

const NONROOT = 65532;
const missing = imageToolsMissing();

interface RuntimeConfig {
  process: { user: { uid: number; gid: number }; args: string[]; env: string[] };
}
interface ImageConfig {
  config: { Labels?: Record<string, string>; User?: string; Entrypoint?: string[]; Cmd?: string[] };
}

let work: string;
let rootfs: string;
let runtime: RuntimeConfig;
let image: ImageConfig;
let layerBytes = 0;
let sim: Simulator;
const children: ChildProcess[] = [];

const blob = (layout: string, digest: string) =>
  JSON.parse(readFileSync(join(layout, 'blobs', ...digest.split(':')), 'utf8'));

/** `args` (a path, or a name on the image's PATH) run in the unpacked root as the image's user, with its env. */
function inImage(args: string[], env: Record<string, string> = {}): [string, string[], NodeJS.ProcessEnv] {
  const imageEnv = Object.fromEntries(
    runtime.process.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );
  return [
    'chroot',
    [`--userspec=${runtime.process.user.uid}:${runtime.process.user.gid}`, rootfs, ...args],
    { ...imageEnv, ...env },
  ];
}

/** Runs to completion with exactly the image's environment (plus `env`), nothing from this process. */
function runInImage(args: string[], env?: Record<string, string>): Promise<RunResult> {
  const [bin, argv, childEnv] = inImage(args, env);
  return new Promise((resolve) => {
    execFile(bin, argv, { env: childEnv, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  if (missing) return;
  const built = await builtImage();
  if (built.builtInSeconds !== undefined) {
    console.log(
      `image: built in ${built.builtInSeconds.toFixed(0)} s (cached in ${built.layout} for later runs)`,
    );
  }
  const index = JSON.parse(readFileSync(join(built.layout, 'index.json'), 'utf8'));
  const manifest = blob(built.layout, index.manifests[0].digest);
  image = blob(built.layout, manifest.config.digest) as ImageConfig;
  layerBytes = (manifest.layers as { size: number }[]).reduce((sum, l) => sum + l.size, 0);
  work = mkdtempSync(join(tmpdir(), 'image-test-'));
  const bundle = join(work, 'bundle');
  const unpack = await run('umoci', ['unpack', '--image', `${built.layout}:${built.tag}`, bundle]);
  if (unpack.code !== 0) throw new Error(`umoci unpack failed: ${unpack.stderr}`);
  rootfs = join(bundle, 'rootfs');
  runtime = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as RuntimeConfig;
  sim = await startSimulator({ exportDurationMs: 500 });
}, 1_800_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await sim?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the image', () => {
  it('runs as 65532, has the CLI as entrypoint with `operator` as default command, and the OCI labels', ({
    skip,
  }) => {
    if (missing) return skip(missing);
    expect(image.config.User).toBe(`${NONROOT}:${NONROOT}`);
    expect(runtime.process.user).toMatchObject({ uid: NONROOT, gid: NONROOT });
    expect(image.config.Entrypoint).toEqual(['/usr/local/bin/static-export']);
    expect(image.config.Cmd).toEqual(['operator']);
    expect(runtime.process.args).toEqual(['/usr/local/bin/static-export', 'operator']);
    const labels = image.config.Labels ?? {};
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
    expect(labels).toMatchObject({
      'org.opencontainers.image.title': 'static-export',
      'org.opencontainers.image.version': version,
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.source': expect.stringMatching(/^https:\/\//),
      'org.opencontainers.image.revision': expect.stringMatching(/^[0-9a-f]{40}(-dirty)?$/),
      'org.opencontainers.image.description': expect.stringMatching(/operator/i),
    });
    expect(Date.parse(labels['org.opencontainers.image.created'] ?? '')).toBeGreaterThan(
      Date.parse('2025-01-01'),
    );
  });

  it('holds Node 24, the built CLI and production dependencies only, no shell; only /tmp is writable', ({
    skip,
  }) => {
    if (missing) return skip(missing);
    const has = (path: string) => {
      try {
        lstatSync(join(rootfs, path));
        return true;
      } catch {
        return false;
      }
    };
    for (const path of ['app/dist/cli/main.js', 'app/node_modules/zod', 'app/crds', 'app/sample-docs']) {
      expect(has(path), path).toBe(true);
    }
    for (const path of [
      'app/src',
      'app/node_modules/typescript',
      'app/node_modules/vitest',
      'bin/sh',
      'usr/bin/env',
    ]) {
      expect(has(path), path).toBe(false);
    }
    // Anything the process (65532, not root) could write: owned by it, or writable by group or others.
    const writable: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(rootfs, dir))) {
        const rel = join(dir, name);
        const st = lstatSync(join(rootfs, rel));
        if (st.isSymbolicLink()) continue;
        if (st.uid === NONROOT || st.gid === NONROOT || (st.mode & 0o022) !== 0) writable.push(`/${rel}`);
        if (st.isDirectory()) walk(rel);
      }
    };
    walk('');
    expect(writable).toEqual(['/tmp']);
    const du = (dir: string): number =>
      readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => {
        const path = join(dir, e.name);
        return sum + (e.isDirectory() ? du(path) : e.isFile() ? statSync(path).size : 0);
      }, 0);
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
    const node = statSync(join(rootfs, 'nodejs/bin/node')).size;
    const modules = du(join(rootfs, 'app/node_modules'));
    const total = du(rootfs);
    console.log(
      `image size: ${mb(total)} unpacked (${mb(layerBytes)} compressed layers): node binary ${mb(node)}, ` +
        `production node_modules ${mb(modules)}, dist ${mb(du(join(rootfs, 'app/dist')))}, rest ${mb(total - node - modules)}`,
    );
    // What the README states: the Node binary dominates; the whole stays small.
    expect(node).toBeGreaterThan(total / 2);
    expect(total).toBeLessThan(200e6);
  });

  it('prints its version and help', async ({ skip }) => {
    if (missing) return skip(missing);
    const [entrypoint] = runtime.process.args as [string];
    const version = await runInImage([entrypoint, '--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(image.config.Labels?.['org.opencontainers.image.version']);
    const help = await runInImage([entrypoint, '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/fetch .*\n[\s\S]*operator/);
  });

  it('runs the site chart init container command: `static-export fetch` from the simulator into /tmp', async ({
    skip,
  }) => {
    if (missing) return skip(missing);
    const bundle = await exportBundle(sim);
    // The chart's command is `static-export …`, found on the image's PATH.
    const fetched = await runInImage(['static-export', 'fetch', '--dest', '/tmp/site', '--json'], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(fetched.code, fetched.stderr).toBe(0);
    const index = statSync(join(rootfs, 'tmp/site/index.html'));
    expect(index.uid).toBe(NONROOT);
    expect(readFileSync(join(rootfs, 'tmp/site/index.html'), 'utf8')).toMatch(/<html/i);
    // Writing anywhere else is refused: the root filesystem belongs to root.
    const refused = await runInImage(['static-export', 'fetch', '--dest', '/app/site'], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/EACCES|permission denied/i);
  });

  it('runs the operator (the default command) against the control plane until a release is Ready', async ({
    skip,
  }) => {
    if (missing) return skip(missing);
    await installCrds();
    const ns = await createNamespace('image');
    try {
      await applySecret(ns, ADMIN_KEY_SECRET, { apiKey: sim.adminKey });
      // A self-contained kubeconfig (certificates inline) where the image's user can read it.
      const config = await kubectlOk(['config', 'view', '--raw', '--flatten', '--minify']);
      writeFileSync(join(rootfs, 'tmp/kubeconfig'), config, { mode: 0o600 });
      chownSync(join(rootfs, 'tmp/kubeconfig'), NONROOT, NONROOT);
      const args = localOperatorArgs({
        kubeconfig: '/tmp/kubeconfig',
        namespaces: [ns],
        apiBaseUrl: sim.baseUrl,
        workDir: '/tmp/operator-work',
      });
      // The entrypoint with the default command (`operator`) and the local run's flags.
      expect(args[0]).toBe(image.config.Cmd?.[0]);
      const [bin, argv, env] = inImage([...(image.config.Entrypoint ?? []), ...args]);
      const operator = spawn(bin, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(operator);
      let logs = '';
      operator.stdout.on('data', (d: Buffer) => {
        logs += d;
      });
      operator.stderr.on('data', (d: Buffer) => {
        logs += d;
      });
      const exited = new Promise<number | null>((resolve) => operator.once('exit', resolve));
      const died = exited.then((code) => {
        throw new Error(`the operator exited (${code}) before the release was Ready:\n${logs}`);
      });
      await applyRelease(ns, 'docs', { domain: 'image.example.com' });
      const ready = await Promise.race([
        died,
        eventually(
          'release Ready',
          async () => {
            const r = await getRelease(ns, 'docs');
            return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
              ? r
              : undefined;
          },
          90_000,
        ),
      ]);
      expect(ready.status?.current?.version).toMatch(/^sha256-/);
      operator.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await kubectl(['delete', 'namespace', ns, '--wait=false']);
    }
  });
});
