// A release's Git Secret (Flux GitRepository keys) read through the operator's Secret reading path.
import { describe, expect, it } from 'vitest';
import {
  gitCredentialsFromSecret,
  readGitCredentials,
  readSigningKey,
} from '../../../src/git/credentials.ts';
import { scrub } from '../../../src/redact.ts';
import { KubeApiError, type KubeClient } from '../../../src/runtime/kube-client.ts';
import type { SecretReads } from '../../../src/secrets/read-secret.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const TOKEN = 'ghp_1234567890abcdefSECRET';
const SSH_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----';

/** Secrets as the operator's cache serves them: 404 for one that does not exist. */
function secretsOf(byName: Record<string, Record<string, string>>): SecretReads {
  return {
    get: async (namespace, name) => {
      const data = byName[`${namespace}/${name}`];
      if (!data) throw new KubeApiError(404, 'NotFound', `secrets "${name}" not found`);
      return { metadata: { name }, data };
    },
  };
}
// Reads go through `secrets`; the client is never called.
const kube = {} as KubeClient;

describe('gitCredentialsFromSecret', () => {
  it("reads Flux's HTTPS keys username and password, trimmed", () => {
    expect(
      gitCredentialsFromSecret('docs/gitops', {
        username: b64('x-access-token'),
        password: b64(`${TOKEN}\n`),
      }),
    ).toEqual({ credentials: { kind: 'basic', username: 'x-access-token', password: TOKEN } });
  });

  it('registers the token, so no message or log line can carry it afterwards', () => {
    const token = 'glpat-registered-0987654321';
    gitCredentialsFromSecret('docs/gitops', { username: b64('bot'), password: b64(token) });
    expect(scrub(`remote said: auth failed for ${token}`)).not.toContain(token);
  });

  it.each([
    ['password', { username: b64('bot') }, 'keys: username'],
    ['username', { password: b64(TOKEN) }, 'keys: password'],
    ['username', {}, 'keys: none'],
  ])('names the missing key %s, the keys there are and what is needed', (key, data, keys) => {
    const r = gitCredentialsFromSecret('docs/gitops', data);
    expect(r).toEqual({
      failure: {
        reason: 'GitSecretInvalid',
        message: `Secret docs/gitops named in spec.gitWriteBack.secretRef has no key ${key} (${keys}): it needs keys username and password (an access token with write access to the repository), as for Flux's GitRepository`,
      },
    });
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });

  it('refuses an empty value, naming the key', () => {
    expect(gitCredentialsFromSecret('docs/gitops', { username: b64('bot'), password: b64(' \n') })).toEqual({
      failure: {
        reason: 'GitSecretInvalid',
        message: expect.stringMatching(/has an empty password: it needs/),
      },
    });
  });

  const FLUX_SSH = {
    identity: b64(SSH_KEY),
    'identity.pub': b64('ssh-ed25519 AAAA'),
    known_hosts: b64('github.com ssh-ed25519 AAAA'),
  };

  it("reads a Flux SSH Secret for an SSH URL: identity, known_hosts, password as the key's passphrase", () => {
    expect(gitCredentialsFromSecret('docs/flux-ssh', FLUX_SSH, 'ssh')).toEqual({
      credentials: { kind: 'ssh', identity: SSH_KEY, knownHosts: 'github.com ssh-ed25519 AAAA' },
    });
    const withPassphrase = { ...FLUX_SSH, password: b64('open sesame') };
    expect(gitCredentialsFromSecret('docs/flux-ssh', withPassphrase, 'ssh')).toMatchObject({
      credentials: { kind: 'ssh', passphrase: 'open sesame' },
    });
    expect(scrub(`key ${SSH_KEY}`)).not.toContain('b3BlbnNz');
  });

  it('refuses an SSH Secret without known_hosts: host keys are always verified', () => {
    const { known_hosts: _, ...noKnownHosts } = FLUX_SSH;
    const r = gitCredentialsFromSecret('docs/flux-ssh', noKnownHosts, 'ssh');
    expect(r).toEqual({
      failure: {
        reason: 'GitSecretInvalid',
        message: expect.stringMatching(
          /^Secret docs\/flux-ssh named in spec\.gitWriteBack\.secretRef has no key known_hosts \(keys: identity, identity\.pub\): host keys are always verified, so nothing is sent without it/,
        ),
      },
    });
    expect(JSON.stringify(r)).not.toMatch(/OPENSSH|b3BlbnNz/);
  });

  it('refuses a Secret without identity for an SSH URL, naming the keys needed', () => {
    const r = gitCredentialsFromSecret('docs/gitops', { username: b64('bot'), password: b64(TOKEN) }, 'ssh');
    expect('failure' in r && r.failure.message).toMatch(
      /has no key identity \(keys: username, password\): an SSH URL needs keys identity .* and known_hosts/,
    );
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });

  it("refuses a Flux SSH Secret for an https:// URL, saying to use the SSH URL, without the key's value", () => {
    const r = gitCredentialsFromSecret('docs/flux-ssh', FLUX_SSH);
    expect(r).toEqual({
      failure: {
        reason: 'GitSecretInvalid',
        message:
          "Secret docs/flux-ssh named in spec.gitWriteBack.secretRef holds SSH keys (identity, identity.pub, known_hosts) but spec.gitWriteBack.url is an https:// URL: use the repository's SSH URL (ssh://git@host/owner/repository.git or git@host:owner/repository.git), or put keys username and password (an access token with write access to the repository) in the Secret",
      },
    });
    expect(JSON.stringify(r)).not.toMatch(/OPENSSH|b3BlbnNz|AAAA/);
  });

  it.each([['https' as const], ['ssh' as const]])(
    'refuses any key Flux format does not have (%s), naming it: bearerToken says what to do instead',
    (transport) => {
      const r = gitCredentialsFromSecret('docs/gitops', { ...FLUX_SSH, bearerToken: b64(TOKEN) }, transport);
      expect(r).toEqual({
        failure: {
          reason: 'GitSecretInvalid',
          message: expect.stringMatching(
            /holds "bearerToken", which write-back does not read: bearer tokens are not supported, put the token in password \(with a username\) instead\. Remove it: the keys read are Flux's GitRepository keys username, password, identity, identity\.pub, known_hosts, ca\.crt$/,
          ),
        },
      });
      expect(JSON.stringify(r)).not.toContain(TOKEN);
      const other = gitCredentialsFromSecret(
        'docs/gitops',
        { token: b64(TOKEN), 'tls.key': b64('k') },
        transport,
      );
      expect('failure' in other && other.failure.message).toContain(
        'holds "token", "tls.key", which write-back does not read',
      );
    },
  );

  it('uses username and password when a Secret holds them beside SSH keys', () => {
    const r = gitCredentialsFromSecret('docs/both', {
      identity: b64(SSH_KEY),
      username: b64('bot'),
      password: b64(TOKEN),
    });
    expect(r).toEqual({ credentials: { kind: 'basic', username: 'bot', password: TOKEN } });
  });
});

describe('readGitCredentials', () => {
  it('is anonymous without a secretRef, reading nothing', async () => {
    expect(await readGitCredentials(kube, 'docs', undefined, secretsOf({}))).toEqual({
      credentials: { kind: 'none' },
    });
  });

  it('reads the Secret in the release namespace', async () => {
    const secrets = secretsOf({ 'docs/gitops': { username: b64('bot'), password: b64(TOKEN) } });
    expect(await readGitCredentials(kube, 'docs', { name: 'gitops' }, secrets)).toEqual({
      credentials: { kind: 'basic', username: 'bot', password: TOKEN },
    });
    // Not another namespace's Secret of that name.
    const other = await readGitCredentials(kube, 'blog', { name: 'gitops' }, secrets);
    expect('failure' in other && other.failure.message).toMatch(/^Secret blog\/gitops named in/);
  });

  it('names a missing Secret and what to create, and looks again soon', async () => {
    expect(await readGitCredentials(kube, 'docs', { name: 'gitops' }, secretsOf({}))).toEqual({
      failure: {
        reason: 'GitSecretInvalid',
        message:
          'Secret docs/gitops named in spec.gitWriteBack.secretRef does not exist: create it with keys username and password (an access token with write access to the repository)',
        retryAfterMs: 30_000,
      },
    });
  });

  it('passes on what the Secret gives: a refusal for a missing key', async () => {
    const r = await readGitCredentials(kube, 'docs', { name: 'gitops' }, secretsOf({ 'docs/gitops': {} }));
    expect('failure' in r && r.failure.message).toMatch(/has no key username \(keys: none\)/);
  });
});

describe('readSigningKey', () => {
  it('reads identity (password its passphrase) from the signing key Secret', async () => {
    const secrets = secretsOf({ 'docs/signing': { identity: b64(SSH_KEY), password: b64('pass phrase') } });
    expect(await readSigningKey(kube, 'docs', { name: 'signing' }, secrets)).toEqual({
      key: { identity: SSH_KEY, passphrase: 'pass phrase' },
    });
  });

  it("refuses Flux's OpenPGP git.asc by name, saying what to use instead, without its value", async () => {
    const secrets = secretsOf({
      'docs/signing': { 'git.asc': b64('-----BEGIN PGP PRIVATE KEY BLOCK-----') },
    });
    const r = await readSigningKey(kube, 'docs', { name: 'signing' }, secrets);
    expect('failure' in r && r.failure.message).toMatch(
      /^Secret docs\/signing named in spec\.gitWriteBack\.signingKey\.secretRef holds git\.asc \(an OpenPGP key, as Flux signs with\): OpenPGP signing is not supported; put an SSH private key/,
    );
    expect(JSON.stringify(r)).not.toContain('PGP PRIVATE');
  });
});
