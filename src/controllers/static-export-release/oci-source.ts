// Effects of the registry source (spec.source.oci): the Secrets it names, the registry client, the
// tag's digest, and the pull of one image (manifest, signature, layer) into a checked site. The
// registry client (and undici under it) is loaded only once a release follows a registry.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type BundleLimits, type SiteSummary, stageExtraction, summarizeSite } from '../../bundle/index.ts';
import type { StaticExportRelease } from '../../crd/index.ts';
import { type AuthFile, authConfigCredentials, type RegistryCredentials } from '../../oci/auth.ts';
import { OciError } from '../../oci/errors.ts';
import type { RegistryClient } from '../../oci/registry.ts';
import type { KubeClient } from '../../runtime/kube-client.ts';
import { readSecretKey, type SecretReads } from '../credentials.ts';
import { type Failure, failure } from '../failures.ts';
import { ociSource } from './oci.ts';

export interface OpenedRegistry {
  client: RegistryClient;
  /** Repository path within the registry. */
  repository: string;
  /** PEM public key when spec.source.oci.verify is set. */
  publicKey?: string;
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

/** `registry.internal:5000/docs/site` → registry and repository path. */
export function splitRepository(repository: string): { registry: string; path: string } {
  const slash = repository.indexOf('/');
  return { registry: repository.slice(0, slash), path: repository.slice(slash + 1) };
}

/** Reads the Secrets spec.source.oci names and opens a client of its registry, or says what is wrong. */
export async function openRegistry(
  kube: KubeClient,
  release: StaticExportRelease,
  options: { plainHttp?: boolean; timeoutMs?: number; secrets?: SecretReads } = {},
): Promise<OpenedRegistry | { failure: Failure }> {
  const source = ociSource(release);
  if (!source) throw new Error('openRegistry: not a registry source');
  const namespace = release.metadata.namespace ?? '';
  const { registry, path } = splitRepository(source.repository);
  let credentials: RegistryCredentials | undefined;
  if (source.credentialsSecretRef) {
    const ref = source.credentialsSecretRef;
    const field = 'spec.source.oci.credentialsSecretRef';
    const read = await readSecretKey(
      kube,
      namespace,
      ref,
      field,
      'a Docker config JSON with the registry login',
      options.secrets,
    );
    if ('failure' in read) return read;
    let config: AuthFile;
    try {
      config = JSON.parse(decode(read.value)) as AuthFile;
    } catch {
      return {
        failure: failure(
          'InvalidRegistryCredentials',
          `The value under ${ref.key} in Secret ${namespace}/${ref.name} is not a Docker config JSON: create it with kubectl create secret docker-registry`,
          true,
          5 * 60_000,
        ),
      };
    }
    try {
      credentials = authConfigCredentials(config, registry, `Secret ${namespace}/${ref.name}`);
    } catch (e) {
      return { failure: failure('InvalidRegistryCredentials', (e as Error).message, true, 5 * 60_000) };
    }
    if (!credentials) {
      return {
        failure: failure(
          'InvalidRegistryCredentials',
          `Secret ${namespace}/${ref.name} (key ${ref.key}) has no auths entry for ${registry}: add one (kubectl create secret docker-registry --docker-server=${registry})`,
          true,
          5 * 60_000,
        ),
      };
    }
  }
  let ca: string | undefined;
  if (source.caSecretRef) {
    const read = await readSecretKey(
      kube,
      namespace,
      source.caSecretRef,
      'spec.source.oci.caSecretRef',
      'the PEM CA bundle',
      options.secrets,
    );
    if ('failure' in read) return read;
    ca = decode(read.value);
  }
  let publicKey: string | undefined;
  if (source.verify) {
    const read = await readSecretKey(
      kube,
      namespace,
      source.verify.publicKeySecretRef,
      'spec.source.oci.verify.publicKeySecretRef',
      'the PEM public key (cosign.pub)',
      options.secrets,
    );
    if ('failure' in read) return read;
    publicKey = decode(read.value);
  }
  const { RegistryClient } = await import('../../oci/registry.ts');
  const client = new RegistryClient({
    registry,
    ...(credentials ? { credentials } : {}),
    ...(ca ? { ca } : {}),
    ...(options.plainHttp ? { plainHttp: true } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  return { client, repository: path, ...(publicKey ? { publicKey } : {}) };
}

/** The digest the followed tag points to now. */
export async function resolveTag(opened: OpenedRegistry, tag: string): Promise<string> {
  const found = await opened.client.resolve(opened.repository, tag);
  if (!found) {
    throw new OciError(
      'NotFound',
      `tag ${tag} does not exist in ${opened.client.registry}/${opened.repository}`,
    );
  }
  return found.digest;
}

/** The cosign signature check (src/oci/sign.ts, loaded with the registry client); a bad key names its field. */
async function verifySignature(opened: OpenedRegistry, digest: string): Promise<void> {
  const { verifyManifest } = await import('../../oci/sign.ts');
  try {
    await verifyManifest(opened.client, opened.repository, digest, opened.publicKey ?? '');
  } catch (e) {
    if (e instanceof OciError && e.reason === 'Usage')
      throw new OciError('Usage', `spec.source.oci.verify.publicKeySecretRef: ${e.message}`);
    throw e;
  }
}

const LAYER_TYPES: Record<string, boolean> = {
  'application/vnd.oci.image.layer.v1.tar': false,
  'application/vnd.docker.image.rootfs.diff.tar': false,
  'application/vnd.oci.image.layer.v1.tar+gzip': true,
  'application/vnd.docker.image.rootfs.diff.tar.gzip': true,
};

export interface PulledSite {
  /** Content version of the site files. */
  version: string;
  site: SiteSummary;
  /** Bytes of the site files. */
  sizeBytes: number;
  verified: boolean;
}

/**
 * Pulls the image at `digest`: its manifest, its signature when a key is set, and its one layer,
 * extracted under the bundle caps into the work directory, summarised for the publish gate and
 * removed again. The image's own version annotation, when present, must match its files.
 */
export async function pullSite(
  opened: OpenedRegistry,
  digest: string,
  o: {
    workDir: string;
    uid: string;
    limits?: Partial<BundleLimits>;
  },
): Promise<PulledSite> {
  const { client, repository } = opened;
  const where = `${client.registry}/${repository}@${digest}`;
  const manifest = await client.getManifest(repository, digest);
  if (!manifest) throw new OciError('NotFound', `manifest ${where} does not exist`);
  if (opened.publicKey) await verifySignature(opened, digest);
  let parsed: { layers?: { mediaType?: string; digest?: string }[]; annotations?: Record<string, string> };
  try {
    parsed = JSON.parse(manifest.bytes.toString('utf8'));
  } catch {
    throw new OciError('InvalidImage', `${where}: the manifest is not JSON`);
  }
  const layers = parsed.layers ?? [];
  const layer = layers[0];
  const gzip = layer?.mediaType === undefined ? undefined : LAYER_TYPES[layer.mediaType];
  if (layers.length !== 1 || !layer?.digest || gzip === undefined) {
    throw new OciError(
      'InvalidImage',
      `${where} is not a site image: expected one tar layer, found ${layers.map((l) => l.mediaType).join(', ') || 'none'}`,
    );
  }
  const blob = await client.getBlob(repository, layer.digest);
  const staged = await stageExtraction(blob, join(o.workDir, `${o.uid}-${randomBytes(4).toString('hex')}`), {
    uncompressed: !gzip,
    force: true,
    ...(o.limits ? { limits: o.limits } : {}),
  });
  try {
    const claimed = parsed.annotations?.['staticexport.dev/version'];
    if (claimed !== undefined && claimed !== staged.version) {
      throw new OciError(
        'InvalidImage',
        `${where}: its annotation staticexport.dev/version says ${claimed}, its files are ${staged.version}`,
      );
    }
    return {
      version: staged.version,
      site: await summarizeSite(staged.dir),
      sizeBytes: staged.bytes,
      verified: opened.publicKey !== undefined,
    };
  } finally {
    await staged.discard();
  }
}
