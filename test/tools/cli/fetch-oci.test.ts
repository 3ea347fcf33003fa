// `static-export fetch --oci` (the site chart's init container inside the gap) through the real CLI
// against a real Distribution registry with htpasswd: the site image's files land in --dest,
// signatures are checked with --verify-key, a tag or a wrong key is refused with the exit code.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentVersion } from '../../../src/bundle/version.ts';
import { pushImage, siteImage, versionTag } from '../../../src/oci/image.ts';
import { siteLayer } from '../../../src/oci/layer.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import { signManifest } from '../../../src/oci/sign.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';
import { startTamperingRegistry, type TamperingRegistry } from '../../support/servers/tampering-registry.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';
import { type KeyPair, opensslKeyPair } from '../../support/tools/signing.ts';

const USER = { username: 'reader', password: 'fetch-pass-Kq29w' };
let work: string;
let registry: TestRegistry;
let client: RegistryClient;
let ours: KeyPair;
let theirs: KeyPair;
let signed: { digest: string; version: string };
let authfile: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'fetch-oci-'));
  registry = await startRegistry({ user: USER });
  client = new RegistryClient({ registry: registry.host, credentials: USER, retries: 0 });
  ours = await opensslKeyPair(work, 'ours');
  theirs = await opensslKeyPair(work, 'theirs');
  const site = join(work, 'site');
  await mkdir(join(site, 'guide'), { recursive: true });
  await writeFile(join(site, 'index.html'), '<h1>Home</h1>');
  await writeFile(join(site, 'guide', 'start.html'), '<h1>Start</h1>');
  const { version } = await contentVersion(site);
  const image = siteImage(await siteLayer(site), { version, domain: 'docs.example.com', pages: 2 });
  const pushed = await pushImage(client, 'docs/site', image, [versionTag(version), 'latest']);
  await signManifest(client, 'docs/site', pushed.digest, ours.private);
  signed = { digest: pushed.digest, version };
  authfile = join(work, 'auth.json');
  const auth = Buffer.from(`${USER.username}:${USER.password}`).toString('base64');
  await writeFile(authfile, JSON.stringify({ auths: { [registry.host]: { auth } } }));
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
  await registry?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const ref = () => `${registry.host}/docs/site@${signed.digest}`;
/** `fetch --oci` of the signed digest into `dest` with the auth file, the signature checked with `publicKeyFile`. */
const fetchSigned = (dest: string, publicKeyFile: string, extra: string[] = []) =>
  runCli([
    'fetch',
    '--oci',
    ref(),
    '--dest',
    dest,
    '--authfile',
    authfile,
    '--verify-key',
    publicKeyFile,
    ...extra,
  ]);

describe('fetch --oci', () => {
  it('extracts the image at a digest, signature checked, with the registry login from an auth file', async () => {
    const dest = join(work, 'out-1', 'site');
    const r = await fetchSigned(dest, ours.publicFile, ['--expect-version', signed.version, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(dest, 'guide', 'start.html'), 'utf8')).toBe('<h1>Start</h1>');
    expect(jsonEvents(r.stdout, 'fetched')[0]).toMatchObject({
      version: signed.version,
      verified: true,
      reference: ref(),
    });
    expect(r.stdout + r.stderr).not.toContain(USER.password);
  });

  it('takes the reference from STATIC_EXPORT_OCI_REFERENCE (the chart reads it from a Secret)', async () => {
    const dest = join(work, 'out-2', 'site');
    const r = await runCli(['fetch', '--dest', dest, '--authfile', authfile], {
      STATIC_EXPORT_OCI_REFERENCE: ref(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(dest, 'index.html'), 'utf8')).toBe('<h1>Home</h1>');
  });

  it('refuses a signature by another key (exit 5) and leaves --dest untouched', async () => {
    const dest = join(work, 'out-3', 'site');
    const r = await fetchSigned(dest, theirs.publicFile);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/verifies with the public key/);
    await expect(readFile(join(dest, 'index.html'))).rejects.toThrow();
  });

  it('refuses a tag (exit 2) and a refused login (exit 3), naming what to fix', async () => {
    const tag = await runCli([
      'fetch',
      '--oci',
      `${registry.host}/docs/site:latest`,
      '--dest',
      join(work, 'x'),
    ]);
    expect(tag.code).toBe(2);
    expect(tag.stderr).toMatch(/must name a digest and no tag/);
    const denied = await runCli(['fetch', '--oci', ref(), '--dest', join(work, 'y')]);
    expect(denied.code).toBe(3);
  });
});

describe('fetch --oci from a registry that alters what it serves', () => {
  let proxy: TamperingRegistry;
  let proxyAuthfile: string;
  let runs = 0;
  beforeAll(async () => {
    proxy = await startTamperingRegistry(registry.host);
    proxyAuthfile = join(work, 'proxy-auth.json');
    const auth = Buffer.from(`${USER.username}:${USER.password}`).toString('base64');
    await writeFile(proxyAuthfile, JSON.stringify({ auths: { [proxy.host]: { auth } } }));
  });
  afterAll(async () => {
    await proxy?.close();
  });

  const fetchThrough = (dest: string) =>
    runCli([
      'fetch',
      '--oci',
      `${proxy.host}/docs/site@${signed.digest}`,
      '--dest',
      dest,
      '--authfile',
      proxyAuthfile,
    ]);

  it.each([
    [
      'a layer with a byte swapped',
      { blobs: 'swap-byte' },
      /the registry sent content with digest sha256:[0-9a-f]{64}, expected/,
    ],
    [
      'a layer cut short',
      { blobs: 'cut-short' },
      /closed after \d+ of its \d+ bytes|sent \d+ of its \d+ bytes/,
    ],
    [
      'another manifest for the digest',
      'manifest',
      /the registry sent another manifest \(digest sha256:[0-9a-f]{64}\)/,
    ],
  ] as const)('refuses %s: exit 5, one line naming the digest, nothing written', async (_, tamper, why) => {
    const other = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      layers: [],
    });
    proxy.tamper =
      tamper === 'manifest'
        ? {
            manifestByDigest: {
              bytes: Buffer.from(other),
              mediaType: 'application/vnd.oci.image.manifest.v1+json',
            },
          }
        : tamper;
    const parent = join(work, `tampered-${runs++}`);
    await mkdir(parent);
    try {
      const r = await fetchThrough(join(parent, 'site'));
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/sha256:[0-9a-f]{64}/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(await readdir(parent)).toEqual([]);
    } finally {
      proxy.tamper = undefined;
    }
  });
});
