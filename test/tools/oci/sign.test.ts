// Cosign-format signatures against a real CNCF Distribution registry and the real cosign CLI
// (built from its Go module): cosign accepts what we sign, we accept what cosign signs, and both
// refuse a wrong key, a replaced manifest and a missing signature.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../../scripts/run-process.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { EXIT, exitCodeFor } from '../../../src/cli/exit-codes.ts';
import { bufferSource, MEDIA_TYPES } from '../../../src/oci/content.ts';
import { OciError, SignatureError } from '../../../src/oci/errors.ts';
import { pushImage, siteImage } from '../../../src/oci/image.ts';
import { siteLayer } from '../../../src/oci/layer.ts';
import { RegistryClient } from '../../../src/oci/registry.ts';
import {
  COSIGN,
  signatureTag,
  signManifest,
  simpleSigningPayload,
  verifyManifest,
} from '../../../src/oci/sign.ts';
import { rejectionOf } from '../../support/rejection.ts';
import {
  GO_TOOL_BUILD_TIMEOUT_MS,
  goTool,
  startRegistry,
  type TestRegistry,
} from '../../support/servers/registry.ts';
import {
  type KeyPair,
  openssl,
  opensslKeyPair,
  runCosign as runSupportCosign,
  cosignVerify as supportCosignVerify,
} from '../../support/tools/signing.ts';

let work: string;
let registry: TestRegistry;
let cosign: string;
let client: RegistryClient;
/** Our key pair (openssl, PKCS#8 / SPKI PEM). */
let key: KeyPair;
/** Another key pair: the "wrong key". */
let other: KeyPair;
/** cosign's own key pair (encrypted private key). */
let cosignKey: { privateFile: string; public: string; publicFile: string };
const COSIGN_PASSWORD = 'test-cosign-password';
let sites = 0;

/** The real cosign, offline, with cosign's key password at hand. */
const runCosign = (args: string[]) => runSupportCosign(cosign, work, args, { COSIGN_PASSWORD });
const cosignVerify = (publicKeyFile: string, reference: string) =>
  supportCosignVerify(cosign, work, publicKeyFile, reference);
/** `cosign sign` with cosign's own key pair, no transparency log, on the plain-HTTP test registry. */
const cosignSign = (reference: string) =>
  runCosign([
    'sign',
    '--key',
    cosignKey.privateFile,
    '--tlog-upload=false',
    '--allow-http-registry',
    '--yes',
    reference,
  ]);

/** Pushes a fresh site image (distinct content each time) and returns its repository and digest. */
async function pushSite(repository = 'docs/site', tag = 'latest'): Promise<string> {
  const dir = join(work, `site-${++sites}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'index.html'), `<h1>Site ${sites}</h1>`);
  const { version } = await contentVersion(dir);
  const image = siteImage(await siteLayer(dir), { version, domain: 'docs.example.com', pages: 1 });
  const pushed = await pushImage(client, repository, image, [version, tag]);
  return pushed.digest;
}

const signatureError = (promise: Promise<unknown>) => rejectionOf(promise, SignatureError);

beforeAll(async () => {
  cosign = await goTool('cosign');
  work = await mkdtemp(join(tmpdir(), 'oci-sign-test-'));
  registry = await startRegistry();
  client = new RegistryClient({ registry: registry.host, retries: 0 });
  key = await opensslKeyPair(work, 'ours');
  other = await opensslKeyPair(work, 'other');
  const generated = await runCosign(['generate-key-pair']);
  if (generated.code !== 0) throw new Error(`cosign generate-key-pair failed: ${generated.stderr}`);
  cosignKey = {
    privateFile: join(work, 'cosign.key'),
    publicFile: join(work, 'cosign.pub'),
    public: await readFile(join(work, 'cosign.pub'), 'utf8'),
  };
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
  await registry?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('signManifest', () => {
  it('writes a signature that cosign verify --key accepts, in the .sig image cosign reads', async () => {
    const digest = await pushSite();
    const signed = await signManifest(client, 'docs/site', digest, key.private);
    expect(signed.outcome).toBe('signed');

    const sig = await client.getManifest('docs/site', signatureTag(digest));
    expect(signatureTag(digest)).toBe(`sha256-${digest.slice(7)}.sig`);
    expect(sig?.digest).toBe(signed.signatureDigest);
    const manifest = JSON.parse(sig?.bytes.toString() ?? '{}');
    expect(manifest.mediaType).toBe(MEDIA_TYPES.ociManifest);
    expect(manifest.layers).toHaveLength(1);
    expect(manifest.layers[0].mediaType).toBe(COSIGN.layerMediaType);

    // By tag and by digest, as a user would run it.
    for (const reference of [`${registry.host}/docs/site:latest`, `${registry.host}/docs/site@${digest}`]) {
      const result = await cosignVerify(key.publicFile, reference);
      expect(result.code, result.stderr).toBe(0);
      const [claim] = JSON.parse(result.stdout);
      expect(claim.critical).toEqual({
        identity: { 'docker-reference': `${registry.host}/docs/site` },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      });
    }
    expect(await verifyManifest(client, 'docs/site', digest, key.public)).toEqual({
      signatureDigest: signed.signatureDigest,
      valid: 1,
    });
  });

  it('writes nothing when the key has signed the digest already', async () => {
    const digest = await pushSite('docs/again');
    const first = await signManifest(client, 'docs/again', digest, key.private);
    const second = await signManifest(client, 'docs/again', digest, key.private);
    expect(second).toEqual({ signatureDigest: first.signatureDigest, outcome: 'exists' });
  });

  it('adds its signature beside one cosign made, and both keys verify with cosign and with us', async () => {
    const digest = await pushSite('docs/both');
    const reference = `${registry.host}/docs/both@${digest}`;
    const cosigned = await cosignSign(reference);
    expect(cosigned.code, cosigned.stderr).toBe(0);
    expect((await signManifest(client, 'docs/both', digest, key.private)).outcome).toBe('signed');

    const sig = JSON.parse(
      (await client.getManifest('docs/both', signatureTag(digest)))?.bytes.toString() ?? '{}',
    );
    expect(sig.layers).toHaveLength(2);
    for (const publicFile of [cosignKey.publicFile, key.publicFile]) {
      const result = await cosignVerify(publicFile, reference);
      expect(result.code, result.stderr).toBe(0);
    }
    for (const publicKey of [cosignKey.public, key.public])
      expect((await verifyManifest(client, 'docs/both', digest, publicKey)).valid).toBe(1);
  });

  it('still verifies after skopeo copies the image and its .sig tag into another registry', async () => {
    const digest = await pushSite('docs/origin');
    await signManifest(client, 'docs/origin', digest, key.private);
    const inside = await startRegistry();
    try {
      for (const reference of [`@${digest}`, `:${signatureTag(digest)}`]) {
        const copied = await runProcess('skopeo', [
          'copy',
          '--src-tls-verify=false',
          '--dest-tls-verify=false',
          '--preserve-digests',
          `docker://${registry.host}/docs/origin${reference}`,
          `docker://${inside.host}/mirror/site${reference.startsWith('@') ? ':latest' : reference}`,
        ]);
        expect(copied.code, copied.stderr).toBe(0);
      }
      const result = await cosignVerify(key.publicFile, `${inside.host}/mirror/site:latest`);
      expect(result.code, result.stderr).toBe(0);
      const insideClient = new RegistryClient({ registry: inside.host, retries: 0 });
      try {
        expect((await verifyManifest(insideClient, 'mirror/site', digest, key.public)).valid).toBe(1);
      } finally {
        await insideClient.close();
      }
    } finally {
      await inside.close();
    }
  });

  it('refuses keys it cannot use, naming the flag and never quoting the key', async () => {
    const digest = await pushSite('docs/keys');
    const rsaFile = join(work, 'rsa.key');
    await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', rsaFile]);
    const rsa = await readFile(rsaFile, 'utf8');
    const encryptedPkcs8File = join(work, 'encrypted.key');
    await openssl([
      'pkcs8',
      '-topk8',
      '-in',
      key.privateFile,
      '-passout',
      'pass:secret1234',
      '-out',
      encryptedPkcs8File,
    ]);
    const cases: [string, RegExp][] = [
      [await readFile(cosignKey.privateFile, 'utf8'), /--sign-key: the private key is encrypted/],
      [await readFile(encryptedPkcs8File, 'utf8'), /--sign-key: the private key is encrypted/],
      [rsa, /--sign-key: the key is not ECDSA P-256; write one with `openssl genpkey -algorithm EC/],
      ['not a key at all', /--sign-key: not a PEM private key/],
      [key.public, /--sign-key: not a PEM private key/],
    ];
    for (const [pem, message] of cases) {
      const error = await signManifest(client, 'docs/keys', digest, pem).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OciError);
      expect((error as OciError).reason).toBe('Usage');
      expect((error as Error).message).toMatch(message);
      const body = pem.split('\n')[1] ?? pem;
      expect((error as Error).message).not.toContain(body);
    }
    // Nothing was written for the refused keys.
    expect(await client.getManifest('docs/keys', signatureTag(digest))).toBeUndefined();

    const verifyCases: [string, RegExp][] = [
      [key.private, /public key: this is a private key; give the public key/],
      [rsa.replace(/PRIVATE/g, 'PUBLIC'), /public key: not a PEM public key/],
    ];
    for (const [pem, message] of verifyCases) {
      const error = await verifyManifest(client, 'docs/keys', digest, pem).catch((e: unknown) => e);
      expect((error as OciError).reason).toBe('Usage');
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain(pem.split('\n')[1]);
    }
  });
});

describe('verifyManifest', () => {
  it('accepts a signature cosign sign --key made, with cosign public key', async () => {
    const digest = await pushSite('docs/cosigned');
    const signed = await cosignSign(`${registry.host}/docs/cosigned@${digest}`);
    expect(signed.code, signed.stderr).toBe(0);
    // The payload cosign signed is byte for byte the one we write.
    const sig = JSON.parse(
      (await client.getManifest('docs/cosigned', signatureTag(digest)))?.bytes.toString() ?? '{}',
    );
    const payload = Buffer.concat(
      await (await client.getBlob('docs/cosigned', sig.layers[0].digest)).toArray(),
    );
    expect(payload.equals(simpleSigningPayload(`${registry.host}/docs/cosigned`, digest))).toBe(true);

    const verified = await verifyManifest(client, 'docs/cosigned', digest, cosignKey.public);
    expect(verified.valid).toBe(1);
    expect((await signatureError(verifyManifest(client, 'docs/cosigned', digest, key.public))).reason).toBe(
      'KeyMismatch',
    );
  });

  it('refuses a wrong key, as cosign does', async () => {
    const digest = await pushSite('docs/wrong-key');
    await signManifest(client, 'docs/wrong-key', digest, key.private);
    const result = await cosignVerify(other.publicFile, `${registry.host}/docs/wrong-key@${digest}`);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('no matching signatures');

    const error = await signatureError(verifyManifest(client, 'docs/wrong-key', digest, other.public));
    expect(error.reason).toBe('KeyMismatch');
    expect(error.message).toContain(`${registry.host}/docs/wrong-key@${digest}`);
    expect(error.message).toMatch(/none of the 1 signature\(s\) .* verifies with the public key/);
    expect(exitCodeFor(error)).toBe(EXIT.bundle);
  });

  it('refuses a signature whose annotation was altered, as cosign does', async () => {
    const digest = await pushSite('docs/altered');
    await signManifest(client, 'docs/altered', digest, key.private);
    const tag = signatureTag(digest);
    const sig = JSON.parse((await client.getManifest('docs/altered', tag))?.bytes.toString() ?? '{}');
    // A valid-looking signature over something else (the same key signed another digest).
    const elsewhere = await pushSite('docs/altered', 'other');
    await signManifest(client, 'docs/altered', elsewhere, key.private);
    const foreign = JSON.parse(
      (await client.getManifest('docs/altered', signatureTag(elsewhere)))?.bytes.toString() ?? '{}',
    );
    sig.layers[0].annotations[COSIGN.signatureAnnotation] =
      foreign.layers[0].annotations[COSIGN.signatureAnnotation];
    await client.putManifest('docs/altered', tag, Buffer.from(JSON.stringify(sig)), MEDIA_TYPES.ociManifest);

    const result = await cosignVerify(key.publicFile, `${registry.host}/docs/altered@${digest}`);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('no matching signatures');
    expect((await signatureError(verifyManifest(client, 'docs/altered', digest, key.public))).reason).toBe(
      'KeyMismatch',
    );
  });

  it('refuses a replaced manifest: unsigned, or carrying the old manifest signature', async () => {
    const signedDigest = await pushSite('docs/tampered');
    await signManifest(client, 'docs/tampered', signedDigest, key.private);
    const tagRef = `${registry.host}/docs/tampered:latest`;
    expect((await cosignVerify(key.publicFile, tagRef)).code).toBe(0);

    // Someone pushes other content under the followed tag.
    const replaced = await pushSite('docs/tampered');
    const unsigned = await cosignVerify(key.publicFile, tagRef);
    expect(unsigned.code).not.toBe(0);
    expect(unsigned.stderr).toContain('no signatures found');
    const missing = await signatureError(verifyManifest(client, 'docs/tampered', replaced, key.public));
    expect(missing.reason).toBe('Missing');
    expect(missing.message).toBe(
      `${registry.host}/docs/tampered@${replaced} is not signed: no cosign signature under tag ` +
        `${signatureTag(replaced)}; sign it with \`static-export mirror push --sign-key\` or \`cosign sign --key\``,
    );

    // ... and copies the old manifest's signature to it.
    const old = await client.getManifest('docs/tampered', signatureTag(signedDigest));
    await client.putManifest(
      'docs/tampered',
      signatureTag(replaced),
      old?.bytes ?? Buffer.from(''),
      MEDIA_TYPES.ociManifest,
    );
    const copied = await cosignVerify(key.publicFile, tagRef);
    expect(copied.code).not.toBe(0);
    expect(copied.stderr).toContain(`invalid or missing digest in claim: ${signedDigest}`);
    const mismatch = await signatureError(verifyManifest(client, 'docs/tampered', replaced, key.public));
    expect(mismatch.reason).toBe('DigestMismatch');
    expect(mismatch.message).toContain(`was made for ${signedDigest}, not for this manifest`);

    // The original stays verifiable by digest.
    expect((await verifyManifest(client, 'docs/tampered', signedDigest, key.public)).valid).toBe(1);
  });

  it('calls a .sig image without cosign signature layers missing', async () => {
    const digest = await pushSite('docs/empty-sig');
    const config = bufferSource(Buffer.from('{}'));
    await client.pushBlob('docs/empty-sig', config);
    const manifest = {
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociManifest,
      config: { mediaType: MEDIA_TYPES.ociConfig, digest: config.digest, size: config.size },
      layers: [],
    };
    const bytes = Buffer.from(JSON.stringify(manifest));
    await client.putManifest('docs/empty-sig', signatureTag(digest), bytes, MEDIA_TYPES.ociManifest);
    expect((await signatureError(verifyManifest(client, 'docs/empty-sig', digest, key.public))).reason).toBe(
      'Missing',
    );
  });
});
