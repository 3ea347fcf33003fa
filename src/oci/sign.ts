// Signatures in cosign's (v2) format, so `cosign verify --key` accepts ours and we accept cosign's:
// the "simple signing" payload naming the manifest digest, signed ECDSA P-256 / SHA-256 (DER,
// base64), stored as an OCI image under the tag `sha256-<hex>.sig` in the same repository, one
// layer per signature (media type application/vnd.dev.cosign.simplesigning.v1+json, the signature
// in the layer's `dev.cosignproject.cosign/signature` annotation). No transparency log: keys only.
// Key material never reaches a message.
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { bufferSource, type Descriptor, MEDIA_TYPES } from './content.ts';
import { isSignatureError, OciError, SignatureError } from './errors.ts';
import { isDigest } from './reference.ts';
import type { RegistryClient } from './registry.ts';

export const COSIGN = {
  layerMediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
  signatureAnnotation: 'dev.cosignproject.cosign/signature',
  payloadType: 'cosign container image signature',
} as const;

/** A payload is a few hundred bytes; anything much larger is not one (and is not read into memory). */
const MAX_PAYLOAD = 64 * 1024;
/** go-containerregistry's zero time, which cosign's signature images carry. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The tag cosign stores a manifest's signatures under. */
export function signatureTag(digest: string): string {
  if (!isDigest(digest))
    throw new OciError('Usage', `"${digest}" is not a manifest digest (sha256:<64 hex>)`);
  return `${digest.replace(':', '-')}.sig`;
}

/**
 * The simple signing payload, byte for byte as cosign writes it (Go's encoding/json of
 * sigstore's payload.SimpleContainerImage): `dockerReference` is registry/repository.
 */
export function simpleSigningPayload(dockerReference: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': dockerReference },
        image: { 'docker-manifest-digest': digest },
        type: COSIGN.payloadType,
      },
      optional: null,
    }),
  );
}

function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

const KEY_HELP =
  'write one with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out site.key` ' +
  'and its public key with `openssl pkey -in site.key -pubout -out site.pub`';

/** The signing key from PEM (PKCS#8 or SEC1, unencrypted, ECDSA P-256); `what` names the flag or field. */
export function signingKey(pem: string | Buffer, what = '--sign-key'): KeyObject {
  const text = pem.toString();
  if (text.includes('ENCRYPTED')) {
    throw new OciError(
      'Usage',
      `${what}: the private key is encrypted (cosign's own key file is too); give an unencrypted PEM key: ${KEY_HELP}`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    // The parser's message says nothing useful and the input is secret: neither is quoted.
    throw new OciError('Usage', `${what}: not a PEM private key; ${KEY_HELP}`);
  }
  if (!isP256(key)) throw new OciError('Usage', `${what}: the key is not ECDSA P-256; ${KEY_HELP}`);
  return key;
}

/** The verification key from PEM (`PUBLIC KEY`, as `cosign generate-key-pair` and `openssl pkey -pubout` write it). */
export function verificationKey(pem: string | Buffer, what = 'public key'): KeyObject {
  const text = pem.toString();
  // createPublicKey would derive the public key from a private one: refuse instead, since a
  // private key where a public one belongs is a leak the user should hear about.
  if (text.includes('PRIVATE KEY'))
    throw new OciError('Usage', `${what}: this is a private key; give the public key (${KEY_HELP})`);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch {
    throw new OciError('Usage', `${what}: not a PEM public key; ${KEY_HELP}`);
  }
  if (!isP256(key)) throw new OciError('Usage', `${what}: the key is not ECDSA P-256; ${KEY_HELP}`);
  return key;
}

interface SignatureLayer extends Descriptor {
  annotations: Record<string, string>;
}

interface SignatureImage {
  /** The `.sig` manifest's digest. */
  digest: string;
  layers: Descriptor[];
}

async function readSignatureImage(
  client: RegistryClient,
  repository: string,
  digest: string,
  signal?: AbortSignal,
): Promise<SignatureImage | undefined> {
  const manifest = await client.getManifest(repository, signatureTag(digest), signal);
  if (!manifest) return undefined;
  let layers: unknown;
  try {
    layers = (JSON.parse(manifest.bytes.toString('utf8')) as { layers?: unknown }).layers;
  } catch {
    throw new OciError(
      'InvalidImage',
      `signature manifest ${repository}:${signatureTag(digest)} is not JSON`,
    );
  }
  return { digest: manifest.digest, layers: Array.isArray(layers) ? (layers as Descriptor[]) : [] };
}

function isSignatureLayer(layer: Descriptor): layer is SignatureLayer {
  return (
    layer?.mediaType === COSIGN.layerMediaType &&
    typeof layer.annotations?.[COSIGN.signatureAnnotation] === 'string' &&
    isDigest(layer.digest)
  );
}

async function readPayload(
  client: RegistryClient,
  repository: string,
  layer: Descriptor,
  signal: AbortSignal | undefined,
): Promise<Buffer> {
  if (!(layer.size >= 0 && layer.size <= MAX_PAYLOAD)) {
    throw new OciError(
      'InvalidImage',
      `signature payload ${layer.digest} is ${layer.size} bytes, not a payload`,
    );
  }
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of await client.getBlob(repository, layer.digest, layer.size, signal)) {
    length += (chunk as Buffer).length;
    if (length > MAX_PAYLOAD)
      throw new OciError(
        'InvalidImage',
        `signature payload ${layer.digest} is larger than its descriptor says`,
      );
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The digest a payload names, or undefined when it is not a cosign simple signing payload. */
function claimedDigest(payload: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(payload.toString('utf8')) as {
      critical?: { type?: unknown; image?: { 'docker-manifest-digest'?: unknown } };
    };
    const digest = parsed.critical?.image?.['docker-manifest-digest'];
    return parsed.critical?.type === COSIGN.payloadType && typeof digest === 'string' ? digest : undefined;
  } catch {
    return undefined;
  }
}

function signatureOk(payload: Buffer, base64: string, key: KeyObject): boolean {
  try {
    return verify('sha256', payload, key, Buffer.from(base64, 'base64'));
  } catch {
    return false;
  }
}

export interface Verified {
  /** The `.sig` manifest holding the signature. */
  signatureDigest: string;
  /** How many of its signatures verify with the key (cosign accepts an image when one does). */
  valid: number;
}

/**
 * Checks that `repository@digest` carries a cosign signature made with the key of `publicKeyPem`
 * over a payload naming exactly `digest`. The payload's docker-reference is not compared (cosign
 * does not either): an image copied to another registry keeps its signature. Throws SignatureError
 * (Missing, DigestMismatch, KeyMismatch) when it does not; OciError when the registry cannot be read.
 */
export async function verifyManifest(
  client: RegistryClient,
  repository: string,
  digest: string,
  publicKeyPem: string | Buffer,
  signal?: AbortSignal,
): Promise<Verified> {
  const key = verificationKey(publicKeyPem);
  const where = `${client.registry}/${repository}@${digest}`;
  const image = await readSignatureImage(client, repository, digest, signal);
  const layers = image?.layers.filter(isSignatureLayer) ?? [];
  if (!image || layers.length === 0) {
    throw new SignatureError(
      'Missing',
      `${where} is not signed: no cosign signature under tag ${signatureTag(digest)}; sign it with ` +
        '`static-export mirror push --sign-key` or `cosign sign --key`',
    );
  }
  let valid = 0;
  const otherDigests = new Set<string>();
  for (const layer of layers) {
    const payload = await readPayload(client, repository, layer, signal);
    if (!signatureOk(payload, layer.annotations[COSIGN.signatureAnnotation] as string, key)) continue;
    const claimed = claimedDigest(payload);
    if (claimed === digest) valid += 1;
    else otherDigests.add(claimed ?? 'no digest');
  }
  if (valid > 0) return { signatureDigest: image.digest, valid };
  if (otherDigests.size > 0) {
    throw new SignatureError(
      'DigestMismatch',
      `${where}: the signature under ${signatureTag(digest)} was made for ${[...otherDigests].join(', ')}, ` +
        'not for this manifest: the manifest or the signature was replaced',
    );
  }
  throw new SignatureError(
    'KeyMismatch',
    `${where}: none of the ${layers.length} signature(s) under ${signatureTag(digest)} verifies with the ` +
      'public key: signed with another key, or the signature was altered',
  );
}

export interface Signed {
  /** The `.sig` manifest's digest after signing. */
  signatureDigest: string;
  /** `exists` when the key's valid signature was there already (nothing was written). */
  outcome: 'signed' | 'exists';
}

function signatureConfig(layers: Descriptor[]): Buffer {
  // What go-containerregistry writes for cosign's signature image (empty.Image plus one layer each).
  return Buffer.from(
    JSON.stringify({
      architecture: '',
      created: ZERO_TIME,
      history: layers.map(() => ({ created: ZERO_TIME })),
      os: '',
      rootfs: { type: 'layers', diff_ids: layers.map((layer) => layer.digest) },
      config: {},
    }),
  );
}

/**
 * Signs `repository@digest` with the ECDSA P-256 key of `privateKeyPem` as `cosign sign --key`
 * does: the signature goes into the `.sig` image (added beside signatures already there, as cosign
 * adds them). Signing again with the same key writes nothing.
 */
export async function signManifest(
  client: RegistryClient,
  repository: string,
  digest: string,
  privateKeyPem: string | Buffer,
): Promise<Signed> {
  const key = signingKey(privateKeyPem);
  const tag = signatureTag(digest);
  const existing = await readSignatureImage(client, repository, digest);
  if (existing) {
    const publicKey = createPublicKey(key).export({ type: 'spki', format: 'pem' });
    try {
      await verifyManifest(client, repository, digest, publicKey);
      return { signatureDigest: existing.digest, outcome: 'exists' };
    } catch (error) {
      if (!isSignatureError(error)) throw error;
    }
  }
  const payload = simpleSigningPayload(`${client.registry}/${repository}`, digest);
  const signature = sign('sha256', payload, key).toString('base64');
  const payloadBlob = bufferSource(payload);
  const layer: SignatureLayer = {
    mediaType: COSIGN.layerMediaType,
    size: payloadBlob.size,
    digest: payloadBlob.digest,
    annotations: { [COSIGN.signatureAnnotation]: signature },
  };
  const layers = [...(existing?.layers ?? []), layer];
  const config = bufferSource(signatureConfig(layers));
  await client.pushBlob(repository, payloadBlob);
  await client.pushBlob(repository, config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociManifest,
      config: { mediaType: MEDIA_TYPES.ociConfig, size: config.size, digest: config.digest },
      layers: layers.map(({ mediaType, size, digest: d, annotations }) => ({
        mediaType,
        size,
        digest: d,
        ...(annotations ? { annotations } : {}),
      })),
    }),
  );
  const signatureDigest = await client.putManifest(repository, tag, manifest, MEDIA_TYPES.ociManifest);
  return { signatureDigest, outcome: 'signed' };
}
