// A Secret's data, read through the operator's cache of Secrets when it has one, else from the API;
// a missing Secret or key is a failure that says what to create, looked for again soon. Shared by
// the admin API key, the registry's credentials and Git's.
import { type Failure, failure } from '../failure.ts';
import type { CachedReader } from '../runtime/cached-reader.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';

/** Secrets read through the informer's cache (the operator) or, without it, straight from the API. */
export type SecretReads = Pick<
  CachedReader<{ metadata: { name: string }; data?: Record<string, string> }>,
  'get'
>;

const RETRY_MISSING_SECRET_MS = 30_000;

/**
 * The base64 value under `ref.key` of a Secret in `namespace`, or the failure that tells the user
 * which Secret or key to create (`field` names the spec field, `what` the value it should hold).
 */
export async function readSecretKey(
  kube: KubeClient,
  namespace: string,
  ref: { name: string; key: string },
  field: string,
  what: string,
  secrets?: SecretReads,
): Promise<{ value: string } | { failure: Failure<'SecretNotFound' | 'SecretKeyNotFound'> }> {
  const read = await readSecretData(
    kube,
    namespace,
    ref.name,
    `${field} does not exist: create it with ${what} under key ${ref.key}`,
    secrets,
  );
  if ('failure' in read) return read;
  const value = read.data[ref.key];
  if (value === undefined) {
    const keys = Object.keys(read.data).join(', ') || 'none';
    return {
      failure: failure(
        'SecretKeyNotFound',
        `Secret ${namespace}/${ref.name} has no key ${ref.key} (keys: ${keys}): set ${field}.key or add the key`,
        true,
        RETRY_MISSING_SECRET_MS,
      ),
    };
  }
  return { value };
}

/**
 * The base64 data of a Secret in `namespace`, or a SecretNotFound failure whose message is
 * `Secret <namespace>/<name> named in <missing>` (which says what to create).
 */
export async function readSecretData(
  kube: KubeClient,
  namespace: string,
  name: string,
  missing: string,
  secrets?: SecretReads,
): Promise<{ data: Record<string, string> } | { failure: Failure<'SecretNotFound'> }> {
  try {
    const secret = secrets
      ? await secrets.get(namespace, name)
      : await kube.get<{ data?: Record<string, string> }>(resourcePath('v1', 'secrets', namespace, name));
    return { data: secret.data ?? {} };
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return {
      failure: failure(
        'SecretNotFound',
        `Secret ${namespace}/${name} named in ${missing}`,
        true,
        RETRY_MISSING_SECRET_MS,
      ),
    };
  }
}
