// writeVersion over SSH against a real sshd (Debian's OpenSSH) serving bare repositories through
// git-shell on loopback: a push with a deploy key, a wrong key refused, a host key that known_hosts
// does not list refused before any authentication (sshd's log shows no userauth request), a host
// known_hosts says nothing about refused before connecting, a Flux SSH Secret used as it is, and
// the same time and size bounds as over HTTPS.
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitCredentialsFromSecret } from '../../src/git/credentials.ts';
import { GIT_HTTP_LIMITS } from '../../src/git/http-transport.ts';
import type { GitCredentials, WriteVersionOutcome } from '../../src/git/types.ts';
import { writeVersion } from '../../src/git/write-version.ts';
import { writeRequest } from '../support/fixtures/write-request.ts';
import { sshGitServerSuite } from '../support/servers/git-suite.ts';
import { sshKeygen } from '../support/servers/ssh-git-server.ts';
import { tempDir } from '../support/temp.ts';

const VALUES = `# values for the docs site
staticExport:
  version: "sha256-old"  # written by the operator
`;

const server = sshGitServerSuite();
const keys = tempDir('ssh-keys-');
const deployKey = sshKeygen(keys, 'deploy');
const otherKey = sshKeygen(keys, 'other');
server.authorize(deployKey.public);

const newRepo = (files: Record<string, string> = { 'deploy/values.yaml': VALUES }) =>
  server.repos.newRepo(files);

const ssh = (key = deployKey, knownHosts = server.knownHosts()): GitCredentials => ({
  kind: 'ssh',
  identity: key.private,
  knownHosts,
});

const request = (name: string, credentials: GitCredentials = ssh()) =>
  writeRequest(server.url(name), credentials);

const git = (name: string, ...args: string[]) => server.repos.git(name, ...args);
const head = (name: string) => server.repos.head(name);
const userauthRequests = () => server.log().match(/userauth-request/g)?.length ?? 0;
const connections = () => server.log().match(/Connection from 127\.0\.0\.1/g)?.length ?? 0;

function expectNoKey(outcome: WriteVersionOutcome): void {
  const text = JSON.stringify(outcome);
  for (const key of [deployKey, otherKey]) {
    expect(text).not.toContain(key.private.split('\n')[1]);
    expect(text).not.toContain(key.public.split(' ')[1]);
  }
}

describe('writeVersion over SSH (real sshd, git-shell)', () => {
  it('pushes one commit with a deploy key: only the field changed', async () => {
    const name = newRepo();
    const before = head(name);
    const outcome = await writeVersion(request(name));
    expect(outcome).toEqual({ outcome: 'Committed', commit: head(name), branch: 'main', attempts: 1 });
    expect(git(name, 'show', 'main:deploy/values.yaml')).toBe(VALUES.replace('"sha256-old"', '"sha256-new"'));
    expect(git(name, 'rev-parse', 'main~1').trim()).toBe(before);
    // The same version again: nothing to commit.
    expect(await writeVersion(request(name))).toMatchObject({
      outcome: 'AlreadyWritten',
      commit: head(name),
    });
  });

  it('a Flux SSH Secret (identity, identity.pub, known_hosts) is used as it is', async () => {
    const name = newRepo();
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const read = gitCredentialsFromSecret(
      'docs/flux-ssh',
      {
        identity: b64(deployKey.private),
        'identity.pub': b64(deployKey.public),
        known_hosts: b64(server.knownHosts()),
      },
      'ssh',
    );
    if (!('credentials' in read)) throw new Error(read.failure.message);
    expect(await writeVersion(request(name, read.credentials))).toMatchObject({ outcome: 'Committed' });
  });

  it('a key the server does not accept: GitAuthRefused, naming the deploy key to add, nothing pushed', async () => {
    const name = newRepo();
    const before = head(name);
    const outcome = await writeVersion(request(name, ssh(otherKey)));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitAuthRefused' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain('deploy key with write access');
    expectNoKey(outcome);
    expect(head(name)).toBe(before);
  });

  it('a host key known_hosts does not list: refused during the key exchange, before any authentication', async () => {
    const name = newRepo();
    const impostor = sshKeygen(tempDir('impostor-'), 'impostor');
    const before = { auth: userauthRequests(), connections: connections() };
    const outcome = await writeVersion(request(name, ssh(deployKey, server.knownHosts(impostor))));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitHostKeyUnknown' });
    if (outcome.outcome === 'Failed') {
      expect(outcome.message).toContain(`ssh://root@127.0.0.1:${server.port}`);
      expect(outcome.message).toMatch(/presented a ssh-ed25519 host key \(SHA256:[A-Za-z0-9+/]+\)/);
      expect(outcome.message).toContain('nothing of the key was sent');
    }
    expectNoKey(outcome);
    // sshd saw the connection, and not one authentication request.
    await new Promise((r) => setTimeout(r, 200));
    expect(connections()).toBe(before.connections + 1);
    expect(userauthRequests()).toBe(before.auth);
  });

  it('known_hosts without the host: refused before connecting at all', async () => {
    const name = newRepo();
    const before = connections();
    const elsewhere = `github.com ${server.hostKey.public.split(' ').slice(0, 2).join(' ')}\n`;
    const outcome = await writeVersion(request(name, ssh(deployKey, elsewhere)));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitHostKeyUnknown' });
    if (outcome.outcome === 'Failed')
      expect(outcome.message).toContain(`lists no host key for [127.0.0.1]:${server.port}`);
    await new Promise((r) => setTimeout(r, 200));
    expect(connections()).toBe(before);
  });

  it('an SSH URL without SSH credentials is refused before connecting', async () => {
    const before = connections();
    const outcome = await writeVersion(request(newRepo(), { kind: 'none' }));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnsupported' });
    expect(connections()).toBe(before);
  });

  it("a repository the server does not have: GitUnreachable with git-shell's words", async () => {
    const outcome = await writeVersion(writeRequest(server.url('missing'), ssh()));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnreachable' });
    if (outcome.outcome === 'Failed')
      expect(outcome.message).toMatch(/does not appear to be a git repository/);
  });

  it('a branch tip over the size limit is refused as over HTTPS (memory bound)', async () => {
    // Random bytes: a pack does not compress them below the limit.
    const name = newRepo({
      'deploy/values.yaml': VALUES,
      'big.bin': randomBytes(48 * 1024).toString('base64'),
    });
    const outcome = await writeVersion(request(name), { ...GIT_HTTP_LIMITS, maxResponseBytes: 16 * 1024 });
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnsupported' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain('sent a pack over');
  });
});

describe('writeVersion over SSH: time bounds', () => {
  let silent: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts and never says a word (no SSH banner).
    silent = createServer((s) => void sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });

  it('a server that never completes the handshake: GitUnreachable within the connect bound', async () => {
    const address = silent.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const started = Date.now();
    const req = request('x', ssh(deployKey, `[127.0.0.1]:${port} ${server.hostKey.public}\n`));
    const outcome = await writeVersion(
      { ...req, target: { ...req.target, url: `ssh://git@127.0.0.1:${port}/site.git` } },
      { ...GIT_HTTP_LIMITS, connectTimeoutMs: 300, headersTimeoutMs: 300 },
    );
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnreachable' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
