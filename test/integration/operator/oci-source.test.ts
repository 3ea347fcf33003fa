// Inside the gap: the operator follows site images in a real CNCF Distribution registry (htpasswd
// basic auth) with no admin API at all. It resolves the tag, pulls and checks the image, publishes
// REGISTRY/REPOSITORY@DIGEST, rolls the site on a new push, changes nothing for the same content,
// refuses what the publish gate or the signature check refuses, and never shows the password.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runProcess } from '../../../scripts/run-process.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { type RunningOperator, startOperator } from '../../../src/controllers/manager.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { createLogger } from '../../../src/log.ts';
import { pushImage, siteImage, versionTag } from '../../../src/oci/image.ts';
import { siteLayer } from '../../../src/oci/layer.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { signManifest } from '../../../src/oci/sign.ts';
import { DEFAULT_DOCS_DIR, startSimulator } from '../../../src/simulator/index.ts';
import { eventsFor, eventually, kubeconfig, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { captureLogs } from '../../support/cluster/operator.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { getRelease } from '../../support/cluster/resources.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';
import { startTamperingRegistry } from '../../support/servers/tampering-registry.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';

const USER = { username: 'mirror', password: 'registry-pass-Zq81xV' };
const REPO = 'docs/site';

// No admin API here: the file runs the operator itself, following the registry alone.
const suite = useOperatorSuite({ namespaces: ['oci-gap'], sim: false });
let registry: TestRegistry;
let pusher: RegistryClient;
let operator: RunningOperator;
let work: string;
const logs = captureLogs();

beforeAll(async () => {
  registry = await startRegistry({ user: USER });
  pusher = new RegistryClient({ registry: registry.host, credentials: USER, retries: 0 });
  work = await mkdtemp(join(tmpdir(), 'oci-gap-'));
  operator = await startOperator({
    logger: createLogger({ level: 'debug', destination: logs.stream }),
    kubeconfig: kubeconfig(),
    namespaces: [suite.ns],
    concurrency: 2,
    metricsHost: '127.0.0.1',
    metricsPort: 0,
    // No admin API base URL: only the registry is reachable.
    workDir: join(work, 'operator'),
    queue: { baseDelayMs: 200, maxDelayMs: 2_000 },
  });
  await applyLogin('registry-login', USER.password);
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await operator?.stop();
  await pusher?.close();
  await registry?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A site of `pages` HTML pages (index.html included unless `noIndex`), its text varied by `label`. */
async function makeSite(label: string, pages = 3, noIndex = false): Promise<string> {
  const dir = join(work, `${label}-${Math.random().toString(16).slice(2)}`);
  await mkdir(join(dir, 'guide'), { recursive: true });
  if (!noIndex) await writeFile(join(dir, 'index.html'), `<h1>Docs ${label}</h1>`);
  for (let i = 1; i < pages; i++) await writeFile(join(dir, 'guide', `p${i}.html`), `<p>${label} ${i}</p>`);
  await writeFile(join(dir, 'guide', 'app.css'), 'body{margin:0}');
  return dir;
}

/** Pushes a site as `mirror push` does: under its version tag, then the moving `latest`. */
async function push(dir: string, tag = 'latest') {
  const { version } = await contentVersion(dir);
  const image = siteImage(await siteLayer(dir), { version, domain: 'docs.example.com', pages: 3 });
  const pushed = await pushImage(pusher, REPO, image, [versionTag(version), tag]);
  return { ...pushed, version, reference: `${registry.host}/${REPO}@${pushed.digest}` };
}

const apply = (obj: unknown) => kubectlOk(['apply', '-f', '-'], stringify(obj));

function dockerConfig(password: string, host = registry.host): string {
  const auth = Buffer.from(`${USER.username}:${password}`).toString('base64');
  return JSON.stringify({ auths: { [host]: { auth } } });
}

async function applyLogin(name: string, password: string, host?: string) {
  await apply({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/dockerconfigjson',
    metadata: { name, namespace: suite.ns },
    stringData: { '.dockerconfigjson': dockerConfig(password, host) },
  });
}

function applyOciRelease(
  name: string,
  oci: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return apply({
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: { name, namespace: suite.ns },
    spec: {
      source: {
        oci: {
          repository: `${registry.host}/${REPO}`,
          credentialsSecretRef: { name: 'registry-login' },
          interval: '10s',
          ...oci,
        },
      },
      target: { valuesSecret: { name: `${name}-values` } },
      ...extra,
    },
  });
}

const ready = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

function until(name: string, what: string, test: (r: StaticExportRelease) => boolean, timeoutMs = 60_000) {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const r = await getRelease(suite.ns, name);
      return test(r) ? r : undefined;
    },
    timeoutMs,
  );
}

async function values(name: string) {
  const s = JSON.parse(
    await kubectlOk(['get', 'secret', `${name}-values`, '-n', suite.ns, '-o', 'json']),
  ) as {
    data: Record<string, string>;
  };
  const decoded = Object.fromEntries(
    Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
  return {
    keys: decoded,
    doc: parse(decoded['values.yaml'] ?? '') as { staticExport: Record<string, unknown> },
  };
}

function applyDeployment(name: string, valuesSecret: string) {
  return apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: suite.ns, labels: { 'staticexport.dev/values-secret': valuesSecret } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      },
    },
  });
}

const versionAnnotation = async (name: string) =>
  (
    JSON.parse(await kubectlOk(['get', 'deployment', name, '-n', suite.ns, '-o', 'json'])) as {
      spec: { template: { metadata: { annotations?: Record<string, string> } } };
    }
  ).spec.template.metadata.annotations?.['staticexport.dev/version'];

const published = async (name: string) =>
  (await eventsFor(suite.ns, name)).filter((e) => e.reason === 'Published').map((e) => e.note);

describe('inside the gap: following a registry tag', () => {
  it('publishes the tag, rolls the site on a new push, and changes nothing for the same content', async () => {
    const v1 = await push(await makeSite('one'));
    await applyDeployment('site', 'gap-values');
    await applyOciRelease('gap');

    const first = await until('gap', 'Ready', (r) => ready(r)?.status === 'True');
    expect(first.status?.current).toMatchObject({
      version: v1.reference,
      contentVersion: v1.version,
      pageCount: 3,
    });
    expect(first.status?.current?.expiresAt).toBeUndefined();
    expect(first.status?.current?.renewalTime).toBeUndefined();
    expect(first.status?.oci?.digest).toBe(v1.digest);
    // The chart's values: the reference to pull and the content version; no link.
    const written = await values('gap');
    expect(written.doc.staticExport).toEqual({
      enabled: true,
      bundleUrl: '',
      version: v1.version,
      oci: { reference: v1.reference },
    });
    expect(written.keys.ociReference).toBe(v1.reference);
    expect(written.keys.version).toBe(v1.version);
    await eventually('site rolled to v1', async () => (await versionAnnotation('site')) === v1.reference);

    // A new push under the followed tag: published within the interval, the site rolls.
    const v2 = await push(await makeSite('two', 4));
    expect(v2.digest).not.toBe(v1.digest);
    const second = await until(
      'gap',
      'serving v2',
      (r) => r.status?.current?.version === v2.reference,
      60_000,
    );
    expect(second.status?.current?.pageCount).toBe(4);
    expect(second.status?.history?.map((h) => h.version)).toEqual([v2.reference, v1.reference]);
    expect((await values('gap')).doc.staticExport.version).toBe(v2.version);
    await eventually('site rolled to v2', async () => (await versionAnnotation('site')) === v2.reference);

    // The same content again: same digest, nothing uploaded, nothing published.
    const again = await push(await makeSite('two', 4));
    expect(again.digest).toBe(v2.digest);
    expect(again.blobs.map((b) => b.outcome)).toEqual(['exists', 'exists']);
    const before = await getRelease(suite.ns, 'gap');
    await kubectlOk([
      'annotate',
      'ser',
      'gap',
      '-n',
      suite.ns,
      '--overwrite',
      'staticexport.dev/requested-at=again',
    ]);
    const after = await until('gap', 'request handled', (r) => r.status?.lastHandledRequestedAt === 'again');
    // Same version, not written again (the rollout record may have completed meanwhile).
    const { rollout: _a, ...kept } = after.status?.current ?? {};
    const { rollout: _b, ...was } = before.status?.current ?? {};
    expect(kept).toEqual(was);
    expect(await published('gap')).toHaveLength(2);
  });

  it('does not publish an image the publish gate refuses; the served one stays', async () => {
    const good = await push(await makeSite('gate-good', 4), 'gated');
    await applyOciRelease('gated', { tag: 'gated' });
    await until('gated', 'Ready', (r) => r.status?.current?.version === good.reference);
    const bad = await push(await makeSite('gate-bad', 3, true), 'gated');
    const refused = await until(
      'gated',
      'PublishGateFailed',
      (r) => ready(r)?.reason === 'PublishGateFailed',
    );
    expect(refused.status?.current?.version).toBe(good.reference);
    expect(refused.status?.oci?.rejected?.digest).toBe(bad.digest);
    expect(ready(refused)?.message).toMatch(/index\.html/);
    expect(ready(refused)?.message).toContain(`Still serving ${good.reference}`);
    expect((await values('gated')).doc.staticExport.version).toBe(good.version);
  });

  it('refuses an image whose registry alters its layer (ImageInvalid, naming the digest), publishes once it stops', async () => {
    const proxy = await startTamperingRegistry(registry.host);
    try {
      await apply({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/dockerconfigjson',
        metadata: { name: 'proxy-login', namespace: suite.ns },
        stringData: {
          '.dockerconfigjson': JSON.stringify({
            auths: {
              [proxy.host]: { auth: Buffer.from(`${USER.username}:${USER.password}`).toString('base64') },
            },
          }),
        },
      });
      const site = await push(await makeSite('tampered', 3), 'tampered');
      const layer = (
        JSON.parse((await pusher.getManifest(REPO, site.digest))?.bytes.toString('utf8') ?? '{}') as {
          layers: { digest: string }[];
        }
      ).layers[0]?.digest;
      proxy.tamper = { blobs: 'swap-byte' };
      await applyOciRelease('tampered', {
        repository: `${proxy.host}/${REPO}`,
        credentialsSecretRef: { name: 'proxy-login' },
        tag: 'tampered',
      });
      const refused = await until('tampered', 'ImageInvalid', (r) => ready(r)?.reason === 'ImageInvalid');
      expect(ready(refused)?.message).toContain(`${layer}: the registry sent content with digest`);
      expect(refused.status?.current).toBeUndefined();
      expect(refused.status?.conditions?.find((c) => c.type === 'Stalled')).toBeUndefined();
      expect((await eventsFor(suite.ns, 'tampered')).some((e) => e.reason === 'ImageInvalid')).toBe(true);
      expect(await kubectl(['get', 'secret', 'tampered-values', '-n', suite.ns])).toMatchObject({ code: 1 });

      proxy.tamper = undefined;
      const fine = await until('tampered', 'Ready', (r) => ready(r)?.status === 'True');
      expect(fine.status?.current?.version).toBe(`${proxy.host}/${REPO}@${site.digest}`);
    } finally {
      await proxy.close();
    }
  });

  it('stops pulling a layer once its release is deleted: the transfer ends long before the layer does', async () => {
    const proxy = await startTamperingRegistry(registry.host);
    try {
      await applyLogin('slow-login', USER.password, proxy.host);
      // 24 MiB that do not compress, sent at 512 KiB/s: the whole layer would take about 48 s.
      const dir = await makeSite('large', 3);
      await writeFile(join(dir, 'guide', 'video.bin'), randomBytes(24 * 1024 * 1024));
      await push(dir, 'large');
      proxy.tamper = { blobs: 'trickle', bytesPerSecond: 512 * 1024 };
      await applyOciRelease('large', {
        repository: `${proxy.host}/${REPO}`,
        credentialsSecretRef: { name: 'slow-login' },
        tag: 'large',
      });
      await eventually('the layer streaming', async () => proxy.trickled > 512 * 1024, 60_000);
      await kubectlOk(['delete', 'ser', 'large', '-n', suite.ns, '--wait=false']);
      // The release goes (its reconcile cancelled, not waited for) and the transfer with it.
      await eventually(
        'large deleted',
        async () => (await kubectl(['get', 'ser', 'large', '-n', suite.ns])).code !== 0,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      const stopped = proxy.trickled;
      await new Promise((r) => setTimeout(r, 4_000));
      expect(proxy.trickled).toBe(stopped);
      expect(stopped).toBeLessThan(8 * 1024 * 1024);
    } finally {
      await proxy.close();
    }
  });

  it('with a public key: publishes signed images only; unsigned or signed by another key is SignatureInvalid', async () => {
    const keys = () =>
      generateKeyPairSync('ec', {
        namedCurve: 'P-256',
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      });
    const ours = keys();
    const theirs = keys();
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'site-signing', namespace: suite.ns },
      stringData: { 'cosign.pub': ours.publicKey },
    });
    await push(await makeSite('unsigned'), 'signed');
    await applyOciRelease('signed', {
      tag: 'signed',
      verify: { publicKeySecretRef: { name: 'site-signing' } },
    });
    const unsigned = await until(
      'signed',
      'SignatureInvalid',
      (x) => ready(x)?.reason === 'SignatureInvalid',
    );
    expect(unsigned.status?.current).toBeUndefined();
    expect(ready(unsigned)?.message).toMatch(/is not signed/);
    expect(ready(unsigned)?.message).toMatch(/spec\.source\.oci\.verify\.publicKeySecretRef/);
    expect((await kubectl(['get', 'secret', 'signed-values', '-n', suite.ns])).code).not.toBe(0);

    // Signed with another key: still refused.
    const other = await push(await makeSite('other-key'), 'signed');
    await signManifest(pusher, REPO, other.digest, theirs.privateKey);
    const wrongKey = await until('signed', 'refused for the key', (x) =>
      Boolean(ready(x)?.message.includes(other.digest) && ready(x)?.reason === 'SignatureInvalid'),
    );
    expect(ready(wrongKey)?.message).toMatch(/verifies with the public key/);
    expect(wrongKey.status?.current).toBeUndefined();

    // Signed with ours: published.
    const good = await push(await makeSite('signed-good'), 'signed');
    await signManifest(pusher, REPO, good.digest, ours.privateKey);
    await until('signed', 'published', (x) => x.status?.current?.version === good.reference);
    expect(await published('signed')).toEqual([expect.stringMatching(/signature verified/)]);
  });

  it('says which Secret to fix for a refused login or a missing tag, and never shows the password', async () => {
    const wrong = 'wrong-pass-Yx77Q2';
    await applyLogin('wrong-login', wrong);
    await applyOciRelease('denied', { credentialsSecretRef: { name: 'wrong-login' } });
    const denied = await until(
      'denied',
      'RegistryAuthFailed',
      (r) => ready(r)?.reason === 'RegistryAuthFailed',
    );
    expect(ready(denied)?.message).toMatch(/spec\.source\.oci\.credentialsSecretRef/);

    await applyOciRelease('notag', { tag: 'no-such-tag' });
    const missing = await until('notag', 'ImageNotFound', (r) => ready(r)?.reason === 'ImageNotFound');
    expect(ready(missing)?.message).toMatch(/tag no-such-tag does not exist/);

    await applyOciRelease('nosecret', { credentialsSecretRef: { name: 'absent-login' } });
    const absent = await until('nosecret', 'SecretNotFound', (r) => ready(r)?.reason === 'SecretNotFound');
    expect(ready(absent)?.message).toMatch(/absent-login named in spec\.source\.oci\.credentialsSecretRef/);

    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/dockerconfigjson',
      metadata: { name: 'other-login', namespace: suite.ns },
      stringData: {
        '.dockerconfigjson': JSON.stringify({ auths: { 'elsewhere.example:5000': { auth: 'eDp5' } } }),
      },
    });
    await applyOciRelease('otherlogin', { credentialsSecretRef: { name: 'other-login' } });
    const other = await until(
      'otherlogin',
      'InvalidRegistryCredentials',
      (r) => ready(r)?.reason === 'InvalidRegistryCredentials',
    );
    expect(ready(other)?.message).toContain(`has no auths entry for ${registry.host}`);

    const everything = [
      logs.lines.join('\n'),
      JSON.stringify(await getRelease(suite.ns, 'denied')),
      JSON.stringify(await eventsFor(suite.ns, 'denied')),
      JSON.stringify(await eventsFor(suite.ns, 'gap')),
    ].join('\n');
    for (const secret of [
      USER.password,
      wrong,
      Buffer.from(`${USER.username}:${USER.password}`).toString('base64'),
    ])
      expect(everything).not.toContain(secret);
  });
});

describe('inside the gap, end to end through the CLI', () => {
  it('mirror sync outside, carried as an archive, mirror load inside: the operator follows, verifies and publishes; new docs roll the site; the same docs change nothing', async () => {
    // Outside: the platform (the simulator) and registry A; inside: registry B (`registry`) and the operator.
    const docs = join(work, 'docs');
    await cp(DEFAULT_DOCS_DIR, docs, { recursive: true });
    const sim = await startSimulator({ docsDir: docs, exportDurationMs: 300 });
    const outside = await startRegistry();
    try {
      const keyFile = join(work, 'admin.key');
      await writeFile(keyFile, sim.adminKey);
      await writeFile(
        join(work, 'mirror.yaml'),
        `target: oci://${outside.host}/docs\ntags: [latest]\napiUrl: ${sim.baseUrl}\ndomains: [docs.example.com]\n`,
      );
      const keys = generateKeyPairSync('ec', {
        namedCurve: 'P-256',
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      });
      const signKey = join(work, 'inside.key');
      await writeFile(signKey, keys.privateKey);
      const authfile = join(work, 'inside-auth.json');
      await writeFile(authfile, dockerConfig(USER.password));
      const archive = join(work, 'site.tar');
      const repo = `${registry.host}/docs/docs.example.com`;

      /** One round: sync from the platform, carry the tag as an archive, load (and sign) inside. */
      const round = async () => {
        const sync = await runCli([
          'mirror',
          'sync',
          '--config',
          join(work, 'mirror.yaml'),
          '--key-file',
          keyFile,
          '--json',
        ]);
        expect(sync.code, sync.stderr).toBe(0);
        await rm(archive, { force: true });
        const copy = await runProcess('skopeo', [
          'copy',
          '--preserve-digests',
          '--src-tls-verify=false',
          `docker://${outside.host}/docs/docs.example.com:latest`,
          `oci-archive:${archive}`,
        ]);
        expect(copy.code, copy.stderr).toBe(0);
        const load = await runCli([
          'mirror',
          'load',
          archive,
          '--to',
          `oci://${repo}`,
          '--tag',
          'latest',
          '--authfile',
          authfile,
          '--sign-key',
          signKey,
          '--json',
        ]);
        expect(load.code, load.stderr).toBe(0);
        return { sync: jsonEvents(sync.stdout), load: jsonEvents(load.stdout) };
      };

      await round();
      await apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'inside-signing', namespace: suite.ns },
        stringData: { 'cosign.pub': keys.publicKey },
      });
      await applyDeployment('inside-site', 'inside-values');
      await applyOciRelease('inside', {
        repository: repo,
        verify: { publicKeySecretRef: { name: 'inside-signing' } },
      });
      const first = await until('inside', 'Ready', (r) => ready(r)?.status === 'True', 90_000);
      const v1 = first.status?.current?.version ?? '';
      expect(v1).toMatch(new RegExp(`^${repo}@sha256:[0-9a-f]{64}$`));
      expect(first.status?.current?.pageCount).toBe(8);
      expect(await published('inside')).toEqual([expect.stringMatching(/signature verified/)]);
      await eventually('inside site rolled', async () => (await versionAnnotation('inside-site')) === v1);

      // New docs on the platform: a second round rolls the site.
      await writeFile(join(docs, 'guides', 'install.md'), '# Install\n\nNew instructions.\n');
      await round();
      const second = await until(
        'inside',
        'a new version',
        (r) => (r.status?.current?.version ?? v1) !== v1,
        90_000,
      );
      const v2 = second.status?.current?.version ?? '';
      await eventually(
        'inside site rolled again',
        async () => (await versionAnnotation('inside-site')) === v2,
      );

      // The same docs again: the same digests, nothing uploaded, nothing published.
      const again = await round();
      expect(JSON.stringify(again.sync)).toMatch(/unchanged/);
      await kubectlOk([
        'annotate',
        'ser',
        'inside',
        '-n',
        suite.ns,
        '--overwrite',
        'staticexport.dev/requested-at=same',
      ]);
      const after = await until(
        'inside',
        'request handled',
        (r) => r.status?.lastHandledRequestedAt === 'same',
      );
      expect(after.status?.current?.version).toBe(v2);
      expect(await published('inside')).toHaveLength(2);
    } finally {
      await outside.close();
      await sim.close();
    }
  });
});
