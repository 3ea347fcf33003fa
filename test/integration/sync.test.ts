// `static-export sync` as a child process against the real kube-apiserver, watching a values Secret,
// fetching the simulator's real bundles over loopback and reporting on a real Pod object.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ControlPlane } from '../../scripts/control-plane/control-plane.ts';
import { fetchBundle } from '../../src/bundle/fetch.ts';
import { contentVersion } from '../../src/bundle/version.ts';
import { pushImage, siteImage, versionTag } from '../../src/oci/image.ts';
import { siteLayer } from '../../src/oci/layer.ts';
import { RegistryClient } from '../../src/oci/registry.ts';
import { signManifest } from '../../src/oci/sign.ts';
import { KubeClient, resourcePath } from '../../src/runtime/kube-client.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import {
  createNamespace,
  eventually,
  kubeconfig,
  kubectlOk,
  tokenKubeconfig,
} from '../support/cluster/kube.ts';
import { startRegistry } from '../support/servers/registry.ts';
import { exportBundle } from '../support/servers/sim-export.ts';
import { sampleDocsCopy, tempDir } from '../support/temp.ts';
import { MAIN, NODE, runCli } from '../support/tools/run-cli.ts';
import { opensslKeyPair } from '../support/tools/signing.ts';

const SECRET = 'site-values';
const POD = 'web';
const CONDITION = 'staticexport.dev/ContentServed';

interface Content {
  version: string;
  bundleUrl: string;
  /** A line of its home page only this version has. */
  marker: string;
}

let sim: Simulator;
let kube: KubeClient;
let ns: string;
let docs: string;
let published = 0;
const children = new Set<ChildProcess>();

/** A new export of the docs with a page line of its own: its link and content version. */
async function publish(): Promise<Content> {
  const marker = `Edition ${++published} of the docs.`;
  const index = join(docs, 'index.md');
  await writeFile(
    index,
    `${(await readFile(index, 'utf8')).replace(/\n\nEdition \d+ of the docs\.$/, '')}\n\n${marker}`,
  );
  const { bundleUrl } = await exportBundle(sim);
  const { version } = await fetchBundle({ url: bundleUrl });
  return { version, bundleUrl, marker };
}

async function setSecret(data: Record<string, string>, name = SECRET): Promise<void> {
  await kube.apply(resourcePath('v1', 'secrets', ns, name), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  });
}

const serve = (c: Content) => setSecret({ version: c.version, bundleUrl: c.bundleUrl });

/** The sync as a sidecar runs; `as` replaces the admin kubeconfig and the --namespace/--pod flags (env instead). */
function startSync(
  root: string,
  {
    secret = SECRET,
    as,
    extra = [],
  }: { secret?: string; as?: { kubeconfig: string; env: Record<string, string> }; extra?: string[] } = {},
): { child: ChildProcess; output: () => string } {
  const identity = as
    ? ['--kubeconfig', as.kubeconfig]
    : ['--namespace', ns, '--pod', POD, '--kubeconfig', kubeconfig()];
  const child = spawn(NODE, [MAIN, 'sync', '--root', root, '--secret', secret, ...identity, ...extra], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...as?.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d;
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d;
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return { child, output: () => output };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

interface PodCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

async function condition(): Promise<PodCondition | undefined> {
  const pod = await kube.get<{ status?: { conditions?: PodCondition[] } }>(
    resourcePath('v1', 'pods', ns, POD),
  );
  return pod.status?.conditions?.find((c) => c.type === CONDITION);
}

const servedPage = (root: string) => readFile(join(root, 'current', 'index.html'), 'utf8');

/** Waits until `root` serves `c`, complete (its content version recomputed from the files), and the pod says so. */
async function untilServing(root: string, c: Content): Promise<void> {
  await eventually(
    `serving ${c.version}`,
    async () => (await condition())?.message === `serving ${c.version}`,
  );
  expect(await servedPage(root)).toContain(c.marker);
  expect((await contentVersion(join(root, 'current'))).version).toBe(c.version);
}

const downloads = () => sim.requests.filter((r) => r.path.startsWith('/bundles/')).length;

beforeAll(async () => {
  docs = sampleDocsCopy();
  sim = await startSimulator({ exportDurationMs: 0, docsDir: docs });
  kube = await KubeClient.create(kubeconfig());
  ns = await createNamespace('sync');
  // A Pod no scheduler picks up (on the test control plane it needs no node): only the sync writes its status.
  await kube.create(resourcePath('v1', 'pods', ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD },
    spec: { schedulerName: 'no-scheduler', containers: [{ name: 'nginx', image: 'nginx' }] },
  });
});

afterEach(async () => {
  sim.configure({ faults: [] });
  await Promise.all([...children].map((c) => stop(c, 'SIGKILL')));
});

afterAll(async () => {
  await kube?.close();
  await sim?.close();
});

describe('static-export sync watching a Secret on the real API server', () => {
  it('serves each new version, the newest of two quick updates, keeps it after a refused fetch, rolls back without a download', async () => {
    const root = tempDir('sync-root-');
    const [a, b, c, d] = [await publish(), await publish(), await publish(), await publish()];
    await serve(a);
    const sync = startSync(root);
    await untilServing(root, a);
    expect((await condition())?.reason).toBe('Serving');

    // Two publishes in quick succession: the newest ends up served.
    await serve(b);
    await serve(c);
    await untilServing(root, c);

    // A link the bundle server refuses: the old version stays served, the pod says why, never the link.
    const tampered = `${d.bundleUrl.replace(/.$/, (ch) => (ch === '0' ? '1' : '0'))}`;
    await setSecret({ version: d.version, bundleUrl: tampered });
    const failed = await eventually('FetchFailed', async () => {
      const cond = await condition();
      return cond?.reason === 'FetchFailed' ? cond : undefined;
    });
    expect(failed.status).toBe('False');
    expect(failed.message).toMatch(new RegExp(`^serving ${c.version}; ${d.version} failed: `));
    expect(failed.message).not.toContain(new URL(tampered).search);
    expect(sync.output()).not.toContain(new URL(tampered).search);
    expect(await servedPage(root)).toContain(c.marker);

    // Rollback to a kept version: a swap, no download (any download now would fail).
    sim.configure({ faults: ['download:503:1'] });
    const before = downloads();
    await serve(a);
    await untilServing(root, a);
    expect(downloads()).toBe(before);
    expect(sync.output()).toContain(`serving ${a.version} (kept on disk, no download)`);
    expect((await readdir(join(root, 'versions'))).length).toBeLessThanOrEqual(3);
    await stop(sync.child);
  });

  it('serves a complete version after being killed mid-download and restarted', async () => {
    const root = tempDir('sync-root-');
    const [a, b] = [await publish(), await publish()];
    await serve(a);
    const first = startSync(root);
    await untilServing(root, a);
    // The download of b hangs: the process is killed while b is staged half way.
    sim.configure({ faults: ['download:delay=60000:1'] });
    await serve(b);
    await eventually('b staged', async () => (await readdir(join(root, 'staging'))).length > 0);
    await stop(first.child, 'SIGKILL');
    expect(await servedPage(root)).toContain(a.marker);
    sim.configure({ faults: [] });
    startSync(root);
    await untilServing(root, b);
    expect(await readdir(join(root, 'staging'))).toEqual([]);
  });

  it('needs no more than a Role limited to its Secret and pods/status, with namespace and pod from the environment', async () => {
    const sa = 'site-sync';
    await kubectlOk(['create', 'serviceaccount', sa, '-n', ns]);
    await kubectlOk([
      'create',
      'role',
      sa,
      '-n',
      ns,
      '--verb=get,list,watch',
      '--resource=secrets',
      `--resource-name=${SECRET}`,
    ]);
    await kubectlOk([
      'create',
      'role',
      `${sa}-report`,
      '-n',
      ns,
      '--verb=patch',
      '--resource=pods/status',
      `--resource-name=${POD}`,
    ]);
    for (const role of [sa, `${sa}-report`]) {
      await kubectlOk([
        'create',
        'rolebinding',
        role,
        '-n',
        ns,
        `--role=${role}`,
        `--serviceaccount=${ns}:${sa}`,
      ]);
    }
    const token = (await kubectlOk(['create', 'token', sa, '-n', ns, '--duration=1h'])).trim();
    const [a, b] = [await publish(), await publish()];
    await serve(a);
    const root = tempDir('sync-root-');
    const saConfig = tokenKubeconfig(token);
    const sync = startSync(root, { as: { kubeconfig: saConfig, env: { POD_NAMESPACE: ns, POD_NAME: POD } } });
    await untilServing(root, a);
    await serve(b);
    await untilServing(root, b);
    expect(sync.output()).not.toMatch(/forbidden|403/i);
    await stop(sync.child);
    expect(sync.child.exitCode).toBe(0);

    // Without the namespace from anywhere: a usage error naming the flag.
    const once = ['sync', '--once', '--root', root, '--kubeconfig', saConfig];
    const noNamespace = await runCli([...once, '--secret', SECRET]);
    expect(noNamespace.code).toBe(2);
    expect(noNamespace.stderr).toContain('--namespace is required');
    // Another Secret than the Role names: exit 3, saying which permission to give.
    const other = await runCli([...once, '--namespace', ns, '--secret', 'other-values']);
    expect(other.code).toBe(3);
    expect(other.stderr).toContain(`not allowed to read Secret ${ns}/other-values (403)`);
    // The sidecar keeps retrying a watch it may not make (no crash loop), says why, and stops on SIGTERM.
    const refused = startSync(tempDir('sync-root-'), {
      secret: 'other-values',
      as: { kubeconfig: saConfig, env: { POD_NAMESPACE: ns } },
    });
    await eventually('refusal logged', async () => /forbidden/i.test(refused.output()));
    expect(refused.child.exitCode).toBeNull();
    await stop(refused.child);
    expect(refused.child.exitCode).toBe(0);
  });

  it('waits for a Secret that does not exist yet, serves it when it comes, and keeps serving when it goes', async () => {
    const name = 'late-values';
    const root = tempDir('sync-root-');
    const child = spawn(
      NODE,
      [
        MAIN,
        'sync',
        '--root',
        root,
        '--secret',
        name,
        '--namespace',
        ns,
        '--pod',
        POD,
        '--kubeconfig',
        kubeconfig(),
      ],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdio: 'ignore' },
    );
    children.add(child);
    await eventually('waiting reported', async () => {
      const cond = await condition();
      return (
        cond?.reason === 'SecretUnusable' &&
        cond.message.includes(`Secret ${ns}/${name} does not exist (yet)`)
      );
    });
    expect(child.exitCode).toBeNull();
    const a = await publish();
    await setSecret({ version: a.version, bundleUrl: a.bundleUrl }, name);
    await untilServing(root, a);
    await kubectlOk(['delete', 'secret', name, '-n', ns]);
    await eventually('deletion reported', async () => {
      const cond = await condition();
      return (
        cond?.message ===
        `serving ${a.version}; Secret ${ns}/${name} was deleted: keeping the served version until it is back.`
      );
    });
    expect(await servedPage(root)).toContain(a.marker);
    await stop(child);
  });

  it.skipIf(!inject('controlPlaneDir'))(
    'keeps running through an API server restart and serves the version published meanwhile',
    async () => {
      const root = tempDir('sync-root-');
      const [a, b] = [await publish(), await publish()];
      await serve(a);
      const sync = startSync(root);
      await untilServing(root, a);
      await ControlPlane.attach(inject('controlPlaneDir') as string).restartComponent('kube-apiserver');
      await serve(b);
      await untilServing(root, b);
      expect(sync.child.exitCode).toBeNull();
      await stop(sync.child);
    },
  );

  it('--once syncs to the Secret version and exits 0; a missing Secret exits 7 naming it', async () => {
    const a = await publish();
    await serve(a);
    const root = tempDir('sync-root-');
    const args = ['sync', '--once', '--root', root, '--namespace', ns, '--kubeconfig', kubeconfig()];
    const ok = await runCli([...args, '--secret', SECRET]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await servedPage(root)).toContain(a.marker);

    const missing = await runCli([...args, '--secret', 'nothing-here']);
    expect(missing.code).toBe(7);
    expect(missing.stderr).toContain(`Secret ${ns}/nothing-here does not exist`);
  });

  it('--once refuses a site with too few pages: exit 5, nothing served, the pod says why', async () => {
    const a = await publish();
    await serve(a);
    const root = tempDir('sync-root-');
    const refused = await runCli([
      'sync',
      '--once',
      '--root',
      root,
      '--secret',
      SECRET,
      '--namespace',
      ns,
      '--pod',
      POD,
      '--min-pages',
      '1000',
      '--kubeconfig',
      kubeconfig(),
    ]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('--min-pages');
    expect(refused.stderr).not.toContain(new URL(a.bundleUrl).search);
    expect(await readdir(join(root, 'versions'))).toEqual([]);
    const cond = await condition();
    expect(cond?.reason).toBe('FetchFailed');
    expect(cond?.message).toMatch(new RegExp(`^serving nothing; ${a.version} failed: .*--min-pages`));
    expect(cond?.message).not.toContain(new URL(a.bundleUrl).search);
  });
});

describe('static-export sync from site images (inside the gap)', () => {
  it('pulls the signed image the Secret names, and keeps it served when the next one is signed by another key', async () => {
    const registry = await startRegistry();
    const client = new RegistryClient({ registry: registry.host, retries: 0 });
    try {
      const work = tempDir('sync-oci-');
      const [ours, theirs] = [await opensslKeyPair(work, 'ours'), await opensslKeyPair(work, 'theirs')];
      /** A site image whose home page says `label`, signed with `key`: its reference and version. */
      const image = async (label: string, key: string) => {
        const site = join(work, label);
        await mkdir(join(site, 'guide'), { recursive: true });
        await writeFile(join(site, 'index.html'), `<h1>${label}</h1>`);
        await writeFile(join(site, 'guide', 'start.html'), '<h1>Start</h1>');
        const { version } = await contentVersion(site);
        const pushed = await pushImage(
          client,
          'docs/site',
          siteImage(await siteLayer(site), { version, domain: 'docs.example.com', pages: 2 }),
          [versionTag(version)],
        );
        await signManifest(client, 'docs/site', pushed.digest, key);
        return { version, ociReference: `${registry.host}/docs/site@${pushed.digest}`, marker: label };
      };
      const first = await image('first image', ours.private);
      const second = await image('second image', theirs.private);
      // The image wins over a link, as in fetch: this one would fail.
      await setSecret({
        version: first.version,
        ociReference: first.ociReference,
        bundleUrl: 'http://127.0.0.1:1/x',
      });
      const root = tempDir('sync-root-');
      const sync = startSync(root, { extra: ['--verify-key', ours.publicFile] });
      await untilServing(root, { ...first, bundleUrl: '' });

      await setSecret({ version: second.version, ociReference: second.ociReference });
      const failed = await eventually('FetchFailed', async () => {
        const cond = await condition();
        return cond?.reason === 'FetchFailed' ? cond : undefined;
      });
      expect(failed.message).toMatch(
        new RegExp(`^serving ${first.version}; ${second.version} failed: .*signature`, 'i'),
      );
      expect(await servedPage(root)).toContain(first.marker);
      await stop(sync.child);
    } finally {
      await client.close();
      await registry.close();
    }
  });
});
