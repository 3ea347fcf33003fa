// The Git credentials of a release (spec.gitWriteBack.secretRef), read from its Secret in Flux's
// GitRepository format, unchanged: for an https:// URL `username` and `password` (a token) and
// `ca.crt` (a private CA); for an SSH URL `identity` (the private key; `password` its passphrase),
// `known_hosts` (required: host keys are always verified) and `identity.pub` (not needed). As in
// Flux the URL's scheme decides which keys are read. Any other key (e.g. `bearerToken`) is refused
// by name. Messages name the Secret and its keys, never a value.
import { X509Certificate } from 'node:crypto';
import { registerSecret } from '../redact.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import { readSecretData, type SecretReads } from '../secrets/read-secret.ts';
import type { GitCredentials } from './types.ts';

const FIELD = 'spec.gitWriteBack.secretRef';
const KEYS = 'keys username and password (an access token with write access to the repository)';
const SSH_KEYS =
  "keys identity (a private key the repository accepts as a deploy key with write access) and known_hosts (the server's host keys)";
/** The keys of Flux's GitRepository Secrets that write-back reads. */
const FLUX_KEYS = ['username', 'password', 'identity', 'identity.pub', 'known_hosts', 'ca.crt'];

export interface GitSecretInvalid {
  reason: 'GitSecretInvalid';
  message: string;
  retryAfterMs?: number;
}

/** How the repository is reached: its URL's scheme (isSshUrl) decides which keys are read. */
export type GitTransport = 'https' | 'ssh';

/** What the data of the Secret `secret` (namespace/name) gives for `transport`, or why it cannot be used. */
export function gitCredentialsFromSecret(
  secret: string,
  data: Record<string, string>,
  transport: GitTransport = 'https',
): { credentials: GitCredentials } | { failure: GitSecretInvalid } {
  const refuse = (why: string) => ({
    failure: { reason: 'GitSecretInvalid' as const, message: `Secret ${secret} named in ${FIELD} ${why}` },
  });
  const unknown = Object.keys(data).filter((k) => !FLUX_KEYS.includes(k));
  if (unknown.length > 0) {
    const bearer = unknown.includes('bearerToken')
      ? ': bearer tokens are not supported, put the token in password (with a username) instead'
      : '';
    return refuse(
      `holds ${unknown.map((k) => JSON.stringify(k)).join(', ')}, which write-back does not read${bearer}. Remove ${unknown.length > 1 ? 'them' : 'it'}: the keys read are Flux's GitRepository keys ${FLUX_KEYS.join(', ')}`,
    );
  }
  const value = (key: string) => {
    const raw = data[key];
    return raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8').trim();
  };
  const keys = Object.keys(data).join(', ') || 'none';
  if (transport === 'ssh') {
    const identity = value('identity');
    const knownHosts = value('known_hosts');
    if (!identity)
      return refuse(
        `has ${identity === undefined ? 'no key identity' : 'an empty identity'} (keys: ${keys}): an SSH URL needs ${SSH_KEYS}, as for Flux's GitRepository`,
      );
    if (!knownHosts)
      return refuse(
        `has ${knownHosts === undefined ? 'no key known_hosts' : 'an empty known_hosts'} (keys: ${keys}): host keys are always verified, so nothing is sent without it. Add the server's keys (ssh-keyscan HOST, checked against the fingerprints your Git host publishes) as known_hosts`,
      );
    const passphrase = value('password');
    registerSecret(identity);
    if (passphrase) registerSecret(passphrase);
    return { credentials: { kind: 'ssh', identity, knownHosts, ...(passphrase ? { passphrase } : {}) } };
  }
  const caCert = value('ca.crt');
  if (caCert !== undefined && !isCertificate(caCert))
    return refuse(
      'has a ca.crt that is not a PEM certificate: put the CA certificate (-----BEGIN CERTIFICATE-----) there',
    );
  const ca = caCert === undefined ? {} : { caCert };
  // A Secret with only a CA: anonymous over HTTPS, trusting it.
  if (caCert !== undefined && !('username' in data) && !('password' in data))
    return { credentials: { kind: 'none', ...ca } };
  if ('identity' in data && !('password' in data))
    return refuse(
      `holds SSH keys (${['identity', 'identity.pub', 'known_hosts'].filter((k) => k in data).join(', ')}) but spec.gitWriteBack.url is an https:// URL: use the repository's SSH URL (ssh://git@host/owner/repository.git or git@host:owner/repository.git), or put ${KEYS} in the Secret`,
    );
  const decoded: Record<string, string> = {};
  for (const key of ['username', 'password'] as const) {
    const v = value(key);
    if (v === undefined)
      return refuse(`has no key ${key} (keys: ${keys}): it needs ${KEYS}, as for Flux's GitRepository`);
    if (v === '') return refuse(`has an empty ${key}: it needs ${KEYS}`);
    decoded[key] = v;
  }
  const { username = '', password = '' } = decoded;
  registerSecret(password);
  return { credentials: { kind: 'basic', username, password, ...ca } };
}

function isCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
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
  transport: GitTransport = 'https',
): Promise<{ credentials: GitCredentials } | { failure: GitSecretInvalid }> {
  if (secretRef === undefined) return { credentials: { kind: 'none' } };
  const read = await readSecretData(
    kube,
    namespace,
    secretRef.name,
    `${FIELD} does not exist: create it with ${transport === 'ssh' ? SSH_KEYS : KEYS}`,
    secrets,
  );
  if ('failure' in read) return { failure: secretUnreadable(read.failure) };
  return gitCredentialsFromSecret(`${namespace}/${secretRef.name}`, read.data, transport);
}

/**
 * A Git Secret that could not be read, as write-back's failure: a missing one is looked for again
 * soon (its retryAfterMs); other problems wait for a change.
 */
function secretUnreadable({
  message,
  retryAfterMs,
}: {
  message: string;
  retryAfterMs?: number;
}): GitSecretInvalid {
  return { reason: 'GitSecretInvalid', message, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/** The key commits are signed with (spec.gitWriteBack.signingKey.secretRef): `identity`, `password` its passphrase. */
export async function readSigningKey(
  kube: KubeClient,
  namespace: string,
  secretRef: { name: string },
  secrets?: SecretReads,
): Promise<{ key: { identity: string; passphrase?: string } } | { failure: GitSecretInvalid }> {
  const field = 'spec.gitWriteBack.signingKey.secretRef';
  const read = await readSecretData(
    kube,
    namespace,
    secretRef.name,
    `${field} does not exist: create it with the key identity (an ed25519 or RSA SSH private key)`,
    secrets,
  );
  const refuse = (why: string) => ({
    failure: {
      reason: 'GitSecretInvalid' as const,
      message: `Secret ${namespace}/${secretRef.name} named in ${field} ${why}`,
    },
  });
  if ('failure' in read) return { failure: secretUnreadable(read.failure) };
  const value = (key: string) => {
    const raw = read.data[key];
    return raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8').trim();
  };
  const identity = value('identity');
  if (!identity)
    return refuse(
      'git.asc' in read.data
        ? 'holds git.asc (an OpenPGP key, as Flux signs with): OpenPGP signing is not supported; put an SSH private key (ed25519 or RSA) as identity and register its public key as a signing key with your Git host'
        : `has no key identity (keys: ${Object.keys(read.data).join(', ') || 'none'}): put an SSH private key (ed25519 or RSA) there`,
    );
  const passphrase = value('password');
  registerSecret(identity);
  if (passphrase) registerSecret(passphrase);
  return { key: { identity, ...(passphrase ? { passphrase } : {}) } };
}
