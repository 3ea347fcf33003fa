// The registry source's calls (spec.source.oci): the Secrets it names, the registry client, the
// tag's digest, and the check of one image (manifest, signature, layer) into a site summary. The
// registry client is loaded only once a release follows a registry.
import type { BundleLimits, SiteSummary } from '../../../bundle/index.ts';
import { type AuthFile, authConfigCredentials, type RegistryCredentials } from '../../../oci/auth.ts';
import { OciError } from '../../../oci/errors.ts';
import type { RegistryClient } from '../../../oci/registry.ts';
import type { KubeClient } from '../../../runtime/kube-client.ts';
import { readSecretKey, type SecretReads } from '../../../secrets/read-secret.ts';
import { type Failure, failure } from '../../failures.ts';
import type { RegistryObserved } from '../release-model.ts';

export interface OpenedRegistry {
  client: RegistryClient;
  /** Repository path within the registry. */
  repository: string;
  /** PEM public key when spec.source.oci.verify is set. */
  publicKey?: string;
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

/** `registry.internal:5000/docs/site` → registry and repository path. */
function splitRepository(repository: string): { registry: string; path: string } {
  const slash = repository.indexOf('/');
  return { registry: repository.slice(0, slash), path: repository.slice(slash + 1) };
}

/** Reads the Secrets spec.source.oci names and opens a client of its registry, or says what is wrong. */
export async function openRegistry(
  kube: KubeClient,
  { release, oci: source }: Pick<RegistryObserved, 'release' | 'oci'>,
  options: { plainHttp?: boolean; timeoutMs?: number; secrets?: SecretReads } = {},
): Promise<OpenedRegistry | { failure: Failure }> {
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
  const { RegistryClient } = await import('../../../oci/registry.ts');
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
export async function resolveTag(
  opened: OpenedRegistry,
  tag: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  const found = await opened.client.resolve(opened.repository, tag, signal);
  if (!found) {
    throw new OciError(
      'NotFound',
      `tag ${tag} does not exist in ${opened.client.registry}/${opened.repository}`,
    );
  }
  return found.digest;
}

export interface PulledSite {
  /** Content version of the site files. */
  version: string;
  site: SiteSummary;
  /** Bytes of the site files. */
  sizeBytes: number;
  verified: boolean;
}

/**
 * Checks the image at `digest` (signature when a key is set, the bundle caps) and summarises it for
 * the publish gate, from the registry's stream: nothing is written to disk. `signal` stops the
 * transfer (the release deleted, the reconcile cancelled).
 */
export async function pullSite(
  opened: OpenedRegistry,
  digest: string,
  o: { limits?: Partial<BundleLimits>; signal?: AbortSignal | undefined } = {},
): Promise<PulledSite> {
  const { inspectSiteImage } = await import('../../../oci/pull.ts');
  const { summary, verified } = await inspectSiteImage(opened.client, opened.repository, digest, {
    ...(opened.publicKey === undefined
      ? {}
      : { publicKey: opened.publicKey, publicKeyField: 'spec.source.oci.verify.publicKeySecretRef' }),
    ...(o.limits ? { limits: o.limits } : {}),
    signal: o.signal,
  });
  return { version: summary.version, site: summary.site, sizeBytes: summary.bytes, verified };
}
