// The Git credentials of a release (spec.gitWriteBack.secretRef), read from its Secret with
// Flux's GitRepository keys: `username` and `password` (a token) for HTTPS. A Secret made for
// Flux's SSH access (`identity`, `known_hosts`) or bearer tokens (`bearerToken`) is refused by
// name: neither is supported yet.
// Messages name the Secret and its keys, never a value.
import { readSecretData, type SecretReads } from '../controllers/credentials.ts';
import { registerSecret } from '../redact.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import type { GitCredentials } from './types.ts';

const FIELD = 'spec.gitWriteBack.secretRef';
const KEYS = 'keys username and password (an access token with write access to the repository)';

export interface GitSecretInvalid {
  reason: 'GitSecretInvalid';
  message: string;
  retryAfterMs?: number;
}

/** What the data of the Secret `secret` (namespace/name) gives, or why it cannot be used. */
export function gitCredentialsFromSecret(
  secret: string,
  data: Record<string, string>,
): { credentials: GitCredentials } | { failure: GitSecretInvalid } {
  const refuse = (why: string) => ({
    failure: { reason: 'GitSecretInvalid' as const, message: `Secret ${secret} named in ${FIELD} ${why}` },
  });
  const ssh = ['identity', 'identity.pub', 'known_hosts'].filter((k) => k in data);
  if (ssh.length > 0 && !('password' in data))
    return refuse(
      `holds SSH keys (${ssh.join(', ')}): SSH is not supported yet. Use the repository's https:// URL in spec.gitWriteBack.url and put ${KEYS} in the Secret`,
    );
  // Flux also takes a bearerToken key; the engine speaks basic auth only so far.
  if ('bearerToken' in data && !('password' in data))
    return refuse(
      `holds a bearerToken: bearer tokens are not supported yet. Put ${KEYS} in the Secret instead`,
    );
  const decoded: Record<string, string> = {};
  for (const key of ['username', 'password'] as const) {
    const raw = data[key];
    if (raw === undefined) {
      const keys = Object.keys(data).join(', ') || 'none';
      return refuse(`has no key ${key} (keys: ${keys}): it needs ${KEYS}, as for Flux's GitRepository`);
    }
    const value = Buffer.from(raw, 'base64').toString('utf8').trim();
    if (value === '') return refuse(`has an empty ${key}: it needs ${KEYS}`);
    decoded[key] = value;
  }
  const { username = '', password = '' } = decoded;
  registerSecret(password);
  return { credentials: { kind: 'basic', username, password } };
}

/**
 * The credentials for `secretRef` in `namespace`: none without one. Call it only once the URL is
 * allowed (gitUrlAllowed): a refused release learns nothing about the Secret.
 */
export async function readGitCredentials(
  kube: KubeClient,
  namespace: string,
  secretRef: { name: string } | undefined,
  secrets?: SecretReads,
): Promise<{ credentials: GitCredentials } | { failure: GitSecretInvalid }> {
  if (secretRef === undefined) return { credentials: { kind: 'none' } };
  const read = await readSecretData(
    kube,
    namespace,
    secretRef.name,
    `${FIELD} does not exist: create it with ${KEYS}`,
    secrets,
  );
  if ('failure' in read) {
    // A missing Secret is looked for again soon (retryAfterMs); other problems wait for a change.
    const { message, retryAfterMs } = read.failure;
    return {
      failure: {
        reason: 'GitSecretInvalid',
        message,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
    };
  }
  return gitCredentialsFromSecret(`${namespace}/${secretRef.name}`, read.data);
}
