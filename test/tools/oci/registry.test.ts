// The registry client against a real CNCF Distribution registry on loopback (anonymous, htpasswd
// basic auth, TLS with a private CA), read back by skopeo and umoci.
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../../scripts/run-process.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { MEDIA_TYPES } from '../../../src/oci/content.ts';
import { OciError } from '../../../src/oci/errors.ts';
import { ANNOTATIONS, pushImage, siteImage } from '../../../src/oci/image.ts';
import { siteLayer } from '../../../src/oci/layer.ts';
import { pruneVersions } from '../../../src/oci/publish.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { signatureTag, signManifest } from '../../../src/oci/sign.ts';
import { scrub } from '../../../src/redact.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  goTool,
  startRegistry,
  startTokenServer,
  type TestRegistry,
  type TokenServer,
} from '../../support/servers/registry.ts';
import { selfSignedCert } from '../../support/tools/signing.ts';

let work: string;
let anon: TestRegistry;
const clients: RegistryClient[] = [];

function client(
  host: string,
  options: Partial<ConstructorParameters<typeof RegistryClient>[0]> = {},
): RegistryClient {
  const c = new RegistryClient({ registry: host, retries: 0, ...options });
  clients.push(c);
  return c;
}

const LONG = `${'very-long-directory-name-'.repeat(3)}x/${'deep-'.repeat(12)}page.html`;

/** A small site with what a real one has: nested pages, an asset, a symlink, a path over 100 bytes. */
async function makeSite(dir: string, index = '<h1>Home</h1>'): Promise<string> {
  await mkdir(join(dir, 'guide', 'assets'), { recursive: true });
  await mkdir(join(dir, LONG, '..'), { recursive: true });
  await writeFile(join(dir, 'index.html'), index);
  await writeFile(join(dir, 'guide', 'start.html'), '<h1>Start</h1>');
  await writeFile(join(dir, 'guide', 'assets', 'app.js'), 'console.log(1)\n'.repeat(5000));
  await writeFile(join(dir, LONG), '<p>deep</p>');
  await writeFile(join(dir, 'empty.txt'), '');
  await symlink('guide/start.html', join(dir, 'start.html'));
  return dir;
}

async function buildImage(dir: string, meta: { domain?: string; jobId?: string } = {}) {
  const { version, files } = await contentVersion(dir);
  const layer = await siteLayer(dir);
  return {
    version,
    files,
    image: siteImage(layer, {
      version,
      domain: meta.domain ?? 'docs.example.com',
      pages: 3,
      ...(meta.jobId ? { exportJobId: meta.jobId } : {}),
      created: '2026-01-02T03:04:05.000Z',
    }),
  };
}

beforeAll(async () => {
  await goTool('registry');
  work = await mkdtemp(join(tmpdir(), 'oci-registry-test-'));
  anon = await startRegistry();
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  for (const c of clients) await c.close();
  await anon?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('site image', () => {
  it('gives the same layer and manifest digest for the same files whatever their mtimes, modes and creation order', async () => {
    const a = await makeSite(join(work, 'det-a'));
    // Same files written in another order, with other times and modes.
    const b = join(work, 'det-b');
    await mkdir(join(b, LONG, '..'), { recursive: true });
    await writeFile(join(b, LONG), '<p>deep</p>');
    await mkdir(join(b, 'guide', 'assets'), { recursive: true });
    await writeFile(join(b, 'guide', 'assets', 'app.js'), 'console.log(1)\n'.repeat(5000));
    await symlink('guide/start.html', join(b, 'start.html'));
    await writeFile(join(b, 'empty.txt'), '');
    await writeFile(join(b, 'guide', 'start.html'), '<h1>Start</h1>');
    await writeFile(join(b, 'index.html'), '<h1>Home</h1>');
    await chmod(join(b, 'index.html'), 0o600);
    await utimes(join(b, 'guide', 'start.html'), new Date('2001-01-01'), new Date('2001-01-01'));
    const first = await buildImage(a);
    const second = await buildImage(b);
    expect(second.image.layer.digest).toBe(first.image.layer.digest);
    expect(second.image.manifestDigest).toBe(first.image.manifestDigest);
    // One changed byte changes both.
    await writeFile(join(b, 'index.html'), '<h1>Home!</h1>');
    const changed = await buildImage(b);
    expect(changed.image.layer.digest).not.toBe(first.image.layer.digest);
    expect(changed.image.manifestDigest).not.toBe(first.image.manifestDigest);
  });
});

describe('RegistryClient (anonymous, plain http on loopback)', () => {
  it('pushes a site image under its version and a moving tag, resolves the tag and reads everything back', async () => {
    const site = await makeSite(join(work, 'push-site'));
    const { version, image } = await buildImage(site, { jobId: 'job-123' });
    const c = client(anon.host);
    const pushed = await pushImage(c, 'docs/site', image, [version, 'latest']);
    expect(pushed.digest).toBe(image.manifestDigest);
    expect(pushed.blobs.map((b) => b.outcome)).toEqual(['uploaded', 'uploaded']);

    const resolved = await c.resolve('docs/site', 'latest');
    expect(resolved?.digest).toBe(image.manifestDigest);
    expect((await c.resolve('docs/site', version))?.digest).toBe(image.manifestDigest);
    expect(await c.resolve('docs/site', 'nope')).toBeUndefined();
    expect(await c.blobSize('docs/site', image.layer.digest)).toBe(image.layer.size);
    expect(await c.blobSize('docs/site', `sha256:${'0'.repeat(64)}`)).toBeUndefined();
    expect((await c.listTags('docs/site')).sort()).toEqual([version, 'latest'].sort());
    expect(await c.listTags('docs/absent')).toEqual([]);

    const manifest = await c.getManifest('docs/site', 'latest');
    expect(JSON.parse(manifest?.bytes.toString() ?? '{}').annotations).toMatchObject({
      [ANNOTATIONS.version]: version,
      [ANNOTATIONS.domain]: 'docs.example.com',
      [ANNOTATIONS.exportJobId]: 'job-123',
      [ANNOTATIONS.created]: '2026-01-02T03:04:05.000Z',
    });
    const chunks: Buffer[] = [];
    for await (const chunk of await c.getBlob('docs/site', image.config.digest)) chunks.push(chunk as Buffer);
    expect(JSON.parse(Buffer.concat(chunks).toString()).config.Labels[ANNOTATIONS.version]).toBe(version);

    // The same image again uploads nothing.
    const again = await pushImage(c, 'docs/site', image, [version, 'latest']);
    expect(again.blobs.map((b) => b.outcome)).toEqual(['exists', 'exists']);
  });

  it('uploads in chunks above the chunk size and mounts across repositories', async () => {
    const site = await makeSite(join(work, 'chunk-site'), '<h1>Chunked</h1>');
    const { version, image } = await buildImage(site);
    const small = client(anon.host, { chunkSize: 16 * 1024 });
    expect(image.layer.size).toBeGreaterThan(3 * 16 * 1024);
    const pushed = await pushImage(small, 'chunked/a', image, [version]);
    expect(pushed.blobs[0]?.outcome).toBe('uploaded');
    expect(await small.blobSize('chunked/a', image.layer.digest)).toBe(image.layer.size);

    const mounted = await pushImage(small, 'chunked/b', image, [version], { mountFrom: ['chunked/a'] });
    expect(mounted.blobs.map((b) => b.outcome)).toEqual(['mounted', 'mounted']);
    expect((await small.resolve('chunked/b', version))?.digest).toBe(image.manifestDigest);
  });

  it('deletes a manifest and with it its tags', async () => {
    const site = await makeSite(join(work, 'delete-site'), '<h1>Delete me</h1>');
    const { version, image } = await buildImage(site);
    const c = client(anon.host);
    await pushImage(c, 'docs/delete', image, [version]);
    expect(await c.deleteManifest('docs/delete', image.manifestDigest)).toBe(true);
    expect(await c.resolve('docs/delete', version)).toBeUndefined();
    expect(await c.deleteManifest('docs/delete', image.manifestDigest)).toBe(false);
  });

  it('prunes old versions together with their cosign signatures, keeping what a moving tag follows', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    const c = client(anon.host);
    const pushed: { version: string; digest: string }[] = [];
    for (const [i, created] of [
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
      '2026-01-03T00:00:00.000Z',
    ].entries()) {
      const dir = await makeSite(join(work, `prune-${i}`), `<h1>v${i}</h1>`);
      const { version } = await contentVersion(dir);
      const image = siteImage(await siteLayer(dir), {
        version,
        domain: 'docs.example.com',
        pages: 1,
        created,
      });
      const result = await pushImage(c, 'docs/prune', image, [version], {
        afterManifest: async ({ repository, digest }) => {
          await signManifest(c, repository, digest, key);
        },
      });
      pushed.push({ version, digest: result.digest });
    }
    // `stable` still follows the oldest version: it stays although it is beyond the newest 1.
    await c.putManifest(
      'docs/prune',
      'stable',
      (await c.getManifest('docs/prune', pushed[0]?.version as string))?.bytes as Buffer,
      MEDIA_TYPES.ociManifest,
    );
    const pruned = await pruneVersions(c, 'docs/prune', 1, { movingTags: ['stable'] });
    expect(pruned.map((p) => p.tag)).toEqual([pushed[1]?.version]);
    const tags = await c.listTags('docs/prune');
    expect(tags.sort()).toEqual(
      [
        pushed[0]?.version,
        pushed[2]?.version,
        'stable',
        signatureTag(pushed[0]?.digest as string),
        signatureTag(pushed[2]?.digest as string),
      ].sort(),
    );
  });

  it('says how to enable deletion when pruning meets a registry that refuses it', async () => {
    const noDelete = await startRegistry({ deleteDisabled: true });
    try {
      const c = client(noDelete.host);
      for (const text of ['<h1>one</h1>', '<h1>two</h1>']) {
        const { version, image } = await buildImage(
          await makeSite(join(work, `nodelete-${text.length}${text[5]}`), text),
        );
        await pushImage(c, 'docs/nodelete', image, [version]);
      }
      const error = await pruneVersions(c, 'docs/nodelete', 1).catch((e: unknown) => e);
      expect((error as OciError).reason).toBe('Unsupported');
      expect((error as OciError).message).toMatch(/storage\.delete\.enabled: true/);
    } finally {
      await noDelete.close();
    }
  });

  it('is read back by skopeo (annotations) and umoci (the same files, the same content version)', async () => {
    const site = await makeSite(join(work, 'skopeo-site'), '<h1>For skopeo</h1>');
    const { version, image } = await buildImage(site, { jobId: 'job-sk' });
    await pushImage(client(anon.host), 'docs/skopeo', image, [version, 'latest']);

    const inspect = await runProcess('skopeo', [
      'inspect',
      '--tls-verify=false',
      `docker://${anon.host}/docs/skopeo:latest`,
    ]);
    expect(inspect.stderr).toBe('');
    const info = JSON.parse(inspect.stdout) as { Digest: string; Labels: Record<string, string> };
    expect(info.Digest).toBe(image.manifestDigest);
    expect(info.Labels).toMatchObject({
      [ANNOTATIONS.version]: version,
      [ANNOTATIONS.exportJobId]: 'job-sk',
    });
    const raw = await runProcess('skopeo', [
      'inspect',
      '--raw',
      '--tls-verify=false',
      `docker://${anon.host}/docs/skopeo:latest`,
    ]);
    expect(JSON.parse(raw.stdout).annotations[ANNOTATIONS.version]).toBe(version);

    const layout = join(work, 'skopeo-layout');
    const copy = await runProcess('skopeo', [
      'copy',
      '--src-tls-verify=false',
      `docker://${anon.host}/docs/skopeo:latest`,
      `oci:${layout}:site`,
    ]);
    expect(copy.code, copy.stderr).toBe(0);
    const bundle = join(work, 'umoci-bundle');
    const unpack = await runProcess('umoci', ['unpack', '--rootless', '--image', `${layout}:site`, bundle]);
    expect(unpack.code, unpack.stderr).toBe(0);
    expect((await contentVersion(join(bundle, 'rootfs'))).version).toBe(version);
    expect(await readFile(join(bundle, 'rootfs', 'index.html'), 'utf8')).toBe('<h1>For skopeo</h1>');
  });
});

describe('RegistryClient with htpasswd basic auth', () => {
  let secured: TestRegistry;
  const user = { username: 'mirror', password: 'correct-horse-battery-staple' };
  beforeAll(async () => {
    secured = await startRegistry({ user });
  });
  afterAll(async () => {
    await secured?.close();
  });

  it('pushes with the right credentials', async () => {
    const site = await makeSite(join(work, 'auth-site'), '<h1>Auth</h1>');
    const { version, image } = await buildImage(site);
    const c = client(secured.host, { credentials: user });
    const pushed = await pushImage(c, 'private/docs', image, [version]);
    expect(pushed.digest).toBe(image.manifestDigest);
    expect((await c.resolve('private/docs', version))?.digest).toBe(image.manifestDigest);
  });

  it('refuses without credentials, saying how to provide them', async () => {
    const error = await client(secured.host)
      .resolve('private/docs', 'latest')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OciError);
    expect((error as OciError).reason).toBe('Auth');
    expect((error as OciError).message).toMatch(/401.*--username and --password-stdin/);
  });

  it('refuses a wrong password without ever showing it', async () => {
    const wrong = { username: 'mirror', password: 'wrong-password-1234' };
    const error = await client(secured.host, { credentials: wrong })
      .resolve('private/docs', 'latest')
      .catch((e: unknown) => e);
    expect((error as OciError).reason).toBe('Auth');
    expect((error as OciError).message).toMatch(/credentials were refused/);
    expect((error as OciError).message).not.toContain(wrong.password);
    expect(scrub(`x ${wrong.password} y`)).not.toContain(wrong.password);
  });
});

/** A P-256 certificate for 127.0.0.1 and localhost, with its key, in `dir` (cert.pem, key.pem). */
describe('RegistryClient with Bearer token auth', () => {
  let tokenRegistry: TestRegistry;
  let tokens: TokenServer;
  const user = { username: 'robot', password: 'robot-secret-password-42' };
  beforeAll(async () => {
    const dir = await selfSignedCert(join(work, 'token'));
    tokens = await startTokenServer({
      user,
      certPem: await readFile(join(dir, 'cert.pem'), 'utf8'),
      keyPem: await readFile(join(dir, 'key.pem'), 'utf8'),
    });
    tokenRegistry = await startRegistry({
      token: {
        realm: tokens.realm,
        service: tokens.service,
        issuer: tokens.issuer,
        rootCertFile: join(dir, 'cert.pem'),
      },
    });
  });
  afterAll(async () => {
    await tokenRegistry?.close();
    await tokens?.close();
  });

  it('gets a token per scope from the challenge realm and pushes, mounts and reads with it', async () => {
    const site = await makeSite(join(work, 'token-site'), '<h1>Token</h1>');
    const { version, image } = await buildImage(site);
    const c = client(tokenRegistry.host, { credentials: user });
    await pushImage(c, 'team/a', image, [version]);
    const mounted = await pushImage(c, 'team/b', image, [version], { mountFrom: ['team/a'] });
    expect(mounted.blobs[0]?.outcome).toBe('mounted');
    expect((await c.resolve('team/b', version))?.digest).toBe(image.manifestDigest);
    const scopes = tokens.requests.map((r) => r.scope.join(' '));
    expect(scopes).toContain('repository:team/a:pull,push');
    expect(scopes).toContain('repository:team/b:pull,push repository:team/a:pull');
    expect(tokens.requests.every((r) => r.user === 'robot')).toBe(true);
  });

  it('reports refused credentials at the token service as an auth error', async () => {
    const c = client(tokenRegistry.host, {
      credentials: { username: 'robot', password: 'not-the-password-0' },
    });
    const error = await c.resolve('team/a', 'latest').catch((e: unknown) => e);
    expect((error as OciError).reason).toBe('Auth');
    expect((error as OciError).message).not.toContain('not-the-password-0');
  });
});

describe('RegistryClient over TLS', () => {
  let tlsRegistry: TestRegistry;
  let ca: string;
  beforeAll(async () => {
    const dir = await selfSignedCert(join(work, 'tls'));
    ca = await readFile(join(dir, 'cert.pem'), 'utf8');
    tlsRegistry = await startRegistry({
      tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') },
    });
  });
  afterAll(async () => {
    await tlsRegistry?.close();
  });

  it('talks https trusting the given CA', async () => {
    const c = client(tlsRegistry.host, { ca });
    expect(c.baseUrl).toBe(`https://${tlsRegistry.host}`);
    const site = await makeSite(join(work, 'tls-site'), '<h1>TLS</h1>');
    const { version, image } = await buildImage(site);
    await pushImage(c, 'tls/docs', image, [version]);
    expect((await c.resolve('tls/docs', version))?.digest).toBe(image.manifestDigest);
  });

  it('refuses a certificate it does not trust', async () => {
    const c = client(tlsRegistry.host.replace('127.0.0.1', 'localhost'), { plainHttp: false, ca: '' });
    const error = await c.resolve('tls/docs', 'latest').catch((e: unknown) => e);
    expect((error as OciError).reason).toBe('Unavailable');
    expect((error as OciError).message).toMatch(/certificate/i);
  });
});

describe('plain http', () => {
  it('is used for loopback registries or when asked for, https otherwise', () => {
    expect(client('localhost:5000').baseUrl).toBe('http://localhost:5000');
    expect(client('127.0.0.1:5000').baseUrl).toBe('http://127.0.0.1:5000');
    expect(client('[::1]:5000').baseUrl).toBe('http://[::1]:5000');
    expect(client('registry.internal').baseUrl).toBe('https://registry.internal');
    expect(client('registry.internal:5000', { plainHttp: true }).baseUrl).toBe(
      'http://registry.internal:5000',
    );
    expect(client('localhost:5000', { ca: 'x' }).baseUrl).toBe('https://localhost:5000');
  });
});
