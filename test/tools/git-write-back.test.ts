// writeVersion against a real Git server (git http-backend behind basic auth on loopback): each
// commit's diff is read back with the real git and asserted exactly.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WriteVersionOutcome } from '../../src/git/types.ts';
import { writeVersion } from '../../src/git/write-version.ts';
import { type WriteRequestOverrides, writeRequest } from '../support/fixtures/write-request.ts';
import { GitServer } from '../support/servers/git-server.ts';
import { gitServerSuite } from '../support/servers/git-suite.ts';
import { tempDir } from '../support/temp.ts';
import { selfSignedCert } from '../support/tools/signing.ts';

const USER = 'writer';
const PASSWORD = 'token-s3cr3t-value-0123456789';
const VALUES = `# values for the docs site
staticExport:
  enabled: true   # serve the export
  version: "sha256-old"  # written by the operator
replicas: 2
`;

const server = gitServerSuite('git-server-', { username: USER, password: PASSWORD });

const request = (name: string, overrides: WriteRequestOverrides = {}) =>
  writeRequest(server.url(name), { kind: 'basic', username: USER, password: PASSWORD }, overrides);

const show = (name: string, rev: string, path: string) => server.git(name, 'show', `${rev}:${path}`);
const count = (name: string, branch = 'main') =>
  Number(server.git(name, 'rev-list', '--count', `refs/heads/${branch}`).trim());

function expectNoSecret(outcome: WriteVersionOutcome): void {
  const text = JSON.stringify(outcome);
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(Buffer.from(`${USER}:${PASSWORD}`).toString('base64'));
  expect(text).not.toContain('written by the operator'); // nothing of the file's content
}

describe('writeVersion commits the version', () => {
  it('first commit: only the scalar changes, comments and layout kept; author and message as asked', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    const before = server.head(name);
    const outcome = await writeVersion(request(name));
    expect(outcome).toEqual({ outcome: 'Committed', commit: server.head(name), branch: 'main', attempts: 1 });
    expect(show(name, 'main', 'deploy/values.yaml')).toBe(VALUES.replace('"sha256-old"', '"sha256-new"'));
    expect(server.git(name, 'diff', '--name-only', before, 'main')).toBe('deploy/values.yaml\n');
    expect(server.git(name, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%B', 'main')).toBe(
      'static-export-operator <static-export-operator@users.noreply.github.com>|static-export-operator <static-export-operator@users.noreply.github.com>|docs: serve sha256-new\n\n',
    );
    expect(server.git(name, 'rev-parse', 'main~1')).toBe(`${before}\n`);
  });

  it('idempotent: the same version again is AlreadyWritten with the head commit, no new commit; a new version commits', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    const first = await writeVersion(request(name));
    expect(first.outcome).toBe('Committed');
    const again = await writeVersion(request(name));
    expect(again).toEqual({ outcome: 'AlreadyWritten', commit: server.head(name), branch: 'main' });
    expect(count(name)).toBe(2);
    const next = await writeVersion(
      request(name, { version: 'sha256-newer', message: 'docs: serve sha256-newer' }),
    );
    expect(next).toMatchObject({ outcome: 'Committed', commit: server.head(name) });
    expect(count(name)).toBe(3);
    expect(show(name, 'main', 'deploy/values.yaml')).toBe(VALUES.replace('"sha256-old"', '"sha256-newer"'));
  });

  it('the remote default branch when branch is unset; a missing field is added under its mapping', async () => {
    const name = server.newRepo({ 'values.yaml': 'staticExport:\n  enabled: true\n' });
    const outcome = await writeVersion(request(name, { target: { branch: undefined, path: 'values.yaml' } }));
    expect(outcome).toMatchObject({ outcome: 'Committed', branch: 'main' });
    expect(show(name, 'main', 'values.yaml')).toBe('staticExport:\n  enabled: true\n  version: sha256-new\n');
  });

  it('a concurrent writer between our fetch and push: fetched again, re-applied on top, both commits kept', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES, 'README.md': 'one\n' });
    const theirs = { commit: '' };
    server.beforeReceivePack = () => {
      theirs.commit = server.commitDirect(name, 'main', { 'README.md': 'two\n' }, 'someone else was faster');
    };
    const outcome = await writeVersion(request(name));
    expect(outcome).toMatchObject({ outcome: 'Committed', attempts: 2, commit: server.head(name) });
    expect(server.git(name, 'rev-parse', 'main~1')).toBe(`${theirs.commit}\n`);
    expect(show(name, 'main', 'README.md')).toBe('two\n');
    expect(show(name, 'main', 'deploy/values.yaml')).toBe(VALUES.replace('"sha256-old"', '"sha256-new"'));
  });

  it('a concurrent writer landing while our push is on the wire: the server refuses it, we fetch and re-apply', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES, 'README.md': 'one\n' });
    const theirs = { commit: '' };
    server.raceAt = 'push';
    server.beforeReceivePack = () => {
      theirs.commit = server.commitDirect(name, 'main', { 'README.md': 'two\n' }, 'someone else was faster');
    };
    try {
      const outcome = await writeVersion(request(name));
      expect(outcome).toMatchObject({ outcome: 'Committed', attempts: 2, commit: server.head(name) });
    } finally {
      server.raceAt = 'advertisement';
    }
    expect(server.git(name, 'rev-parse', 'main~1')).toBe(`${theirs.commit}\n`);
    expect(show(name, 'main', 'README.md')).toBe('two\n');
  });

  it('a branch that moves before every push: GitNonFastForward after the retries, never forced', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES, 'README.md': '0\n' });
    let theirs = 0;
    const arm = () => {
      server.beforeReceivePack = () => {
        server.commitDirect(name, 'main', { 'README.md': `${++theirs}\n` });
        arm();
      };
    };
    arm();
    try {
      const outcome = await writeVersion(request(name));
      expect(outcome).toEqual({
        outcome: 'Failed',
        reason: 'GitNonFastForward',
        message: `main of ${server.url(name)} kept moving: the push was rejected as non-fast-forward 5 times`,
      });
    } finally {
      server.beforeReceivePack = undefined;
    }
    expect(theirs).toBe(5);
    expect(count(name)).toBe(6);
    expect(show(name, 'main', 'deploy/values.yaml')).toBe(VALUES);
  });

  it('several writes to one repository at once are serialized: every one lands, none is lost', async () => {
    const name = server.newRepo({ 'a.yaml': 'v: 1\n', 'b.yaml': 'v: 1\n', 'c.yaml': 'v: 1\n' });
    const outcomes = await Promise.all(
      ['a.yaml', 'b.yaml', 'c.yaml'].map((path) =>
        writeVersion(request(name, { target: { path, field: 'v' } })),
      ),
    );
    expect(outcomes.map((o) => o.outcome)).toEqual(['Committed', 'Committed', 'Committed']);
    expect(outcomes.map((o) => (o.outcome === 'Committed' ? o.attempts : 0))).toEqual([1, 1, 1]);
    for (const path of ['a.yaml', 'b.yaml', 'c.yaml'])
      expect(show(name, 'main', path)).toBe('v: sha256-new\n');
    expect(count(name)).toBe(4);
  });

  it('pushBranch missing: created from branch; existing: written on top of it', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    const base = server.head(name);
    const created = await writeVersion(request(name, { target: { pushBranch: 'docs-version' } }));
    expect(created).toMatchObject({ outcome: 'Committed', branch: 'docs-version' });
    expect(server.head(name)).toBe(base);
    expect(server.git(name, 'rev-parse', 'docs-version~1')).toBe(`${base}\n`);
    const next = await writeVersion(
      request(name, { version: 'sha256-newer', target: { pushBranch: 'docs-version' } }),
    );
    expect(next).toMatchObject({ outcome: 'Committed', branch: 'docs-version' });
    expect(count(name, 'docs-version')).toBe(3);
    expect(show(name, 'docs-version', 'deploy/values.yaml')).toBe(
      VALUES.replace('"sha256-old"', '"sha256-newer"'),
    );
  });
});

describe('without credentials', () => {
  it('an anonymous server gets no Authorization header at all', async () => {
    const open = await new GitServer(tempDir('git-anonymous-')).start();
    try {
      open.createRepo('site', { 'values.yaml': 'staticExport:\n  version: old\n' });
      const outcome = await writeVersion(
        writeRequest(
          open.url('site'),
          { kind: 'none' },
          { target: { branch: undefined, path: 'values.yaml' } },
        ),
      );
      expect(outcome).toMatchObject({ outcome: 'Committed', branch: 'main' });
      expect(open.seen.length).toBeGreaterThan(0);
      expect(open.seen.filter((r) => r.authorization !== undefined)).toEqual([]);
    } finally {
      await open.stop();
    }
  });
});

describe("Argo CD's override file", () => {
  it('created when missing, then updated with the other parameters kept', async () => {
    const name = server.newRepo({ 'apps/docs/Chart.yaml': 'name: docs\n' });
    const path = 'apps/docs/.argocd-source-docs.yaml';
    const created = await writeVersion(request(name, { target: { path } }));
    expect(created.outcome).toBe('Committed');
    expect(show(name, 'main', path)).toBe(
      'helm:\n  parameters:\n  - name: staticExport.version\n    value: sha256-new\n    forceString: true\n',
    );
    server.commitDirect(name, 'main', {
      [path]:
        'helm:\n  parameters:\n  - name: image.tag\n    value: "1.2"\n  - name: staticExport.version\n    value: sha256-new\n    forceString: true\n',
    });
    const updated = await writeVersion(request(name, { version: 'sha256-newer', target: { path } }));
    expect(updated.outcome).toBe('Committed');
    expect(show(name, 'main', path)).toBe(
      'helm:\n  parameters:\n  - name: image.tag\n    value: "1.2"\n  - name: staticExport.version\n    value: sha256-newer\n    forceString: true\n',
    );
    expect(show(name, 'main', 'apps/docs/Chart.yaml')).toBe('name: docs\n');
  });
});

describe('writeVersion fails with a reason and no secret', () => {
  it("a protected branch (pre-receive hook): GitBranchProtected with the hook's line; nothing pushed", async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    server.protect(
      name,
      'main',
      'GL-HOOK-ERR: You are not allowed to push code to protected branches on this project.',
    );
    const before = server.head(name);
    const outcome = await writeVersion(request(name));
    expect(outcome).toEqual({
      outcome: 'Failed',
      reason: 'GitBranchProtected',
      message: `${server.url(name)} refused the push: GL-HOOK-ERR: You are not allowed to push code to protected branches on this project.`,
    });
    expect(server.head(name)).toBe(before);
  });

  it('a hook echoing the credentials back: the quoted line has them redacted', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    server.protect(
      name,
      'main',
      `denied for ${USER}:${PASSWORD} (Authorization: Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')})`,
    );
    const outcome = await writeVersion(request(name));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain('[REDACTED]');
    expectNoSecret(outcome);
  });

  it('wrong credentials: GitAuthRefused naming the Secret, not the password', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    const outcome = await writeVersion(
      request(name, { credentials: { kind: 'basic', username: USER, password: 'wrong-password-123456' } }),
    );
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitAuthRefused' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain('spec.gitWriteBack.secretRef');
    expect(JSON.stringify(outcome)).not.toContain('wrong-password-123456');
    expectNoSecret(outcome);
  });

  it('a redirect to another host: GitRedirected, and the other host never saw the credentials', async () => {
    const other = await new GitServer(tempDir('git-other-')).start('127.0.0.2');
    const redirecting = await new GitServer(tempDir('git-redirect-'), { redirectTo: other.origin }).start();
    try {
      const outcome = await writeVersion(request('site', { target: { url: redirecting.url('site') } }));
      expect(outcome).toEqual({
        outcome: 'Failed',
        reason: 'GitRedirected',
        message: `${redirecting.origin} redirected to ${other.origin}; redirects are not followed (credentials never follow one): set url to the repository's own address`,
      });
      expect(redirecting.seen.length).toBe(1);
      expect(other.seen).toEqual([]);
      expectNoSecret(outcome);
    } finally {
      await redirecting.stop();
      await other.stop();
    }
  });

  it.each([
    ['garbage', 'GitUnreachable', /did not answer as a Git smart HTTP server/],
    [
      'huge',
      'GitUnsupported',
      /sent a pack over 1 MiB: a branch whose tip is this large is not written back/,
    ],
    ['silent', 'GitUnreachable', /response headers within 500 ms|did not finish within/],
  ] as const)('a hostile server answering %s: %s, bounded', async (hostile, reason, message) => {
    const bad = await new GitServer(tempDir('git-hostile-'), { hostile }).start();
    try {
      const limits = {
        connectTimeoutMs: 500,
        headersTimeoutMs: 500,
        bodyTimeoutMs: 500,
        maxResponseBytes: 1024 * 1024,
        maxRefsBytes: 1024 * 1024,
        maxPushAnswerBytes: 1024 * 1024,
      };
      const started = Date.now();
      const outcome = await writeVersion(request('x', { target: { url: bad.url('x') } }), limits);
      expect(outcome).toMatchObject({ outcome: 'Failed', reason });
      if (outcome.outcome === 'Failed') expect(outcome.message).toMatch(message);
      expect(Date.now() - started).toBeLessThan(5_000);
      expectNoSecret(outcome);
    } finally {
      await bad.stop();
    }
  });

  it("a server that never answers, under the default per-request timeouts: the call's deadline ends it", async () => {
    const bad = await new GitServer(tempDir('git-silent-'), { hostile: 'silent' }).start();
    try {
      const outcome = await writeVersion(request('x', { target: { url: bad.url('x') }, timeoutMs: 500 }));
      expect(outcome).toEqual({
        outcome: 'Failed',
        reason: 'GitUnreachable',
        message: `writing to ${bad.url('x')} did not finish within 500 ms`,
      });
    } finally {
      await bad.stop();
    }
  });

  it('https with a certificate nothing trusts: GitUnreachable before any request carries the credentials', async () => {
    const dir = await selfSignedCert(tempDir('git-tls-'), ['IP:127.0.0.1']);
    const tls = {
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    };
    const untrusted = await new GitServer(tempDir('git-https-'), { tls }).start();
    try {
      const outcome = await writeVersion(request('x', { target: { url: untrusted.url('x') } }));
      expect(outcome).toEqual({
        outcome: 'Failed',
        reason: 'GitUnreachable',
        message: `${untrusted.url('x')} presented a self-signed TLS certificate [DEPTH_ZERO_SELF_SIGNED_CERT]: if a private CA signed it, put that CA (PEM) in the Secret as ca.crt, as for Flux`,
      });
      expect(untrusted.seen).toEqual([]);
    } finally {
      await untrusted.stop();
    }
  });

  it('nothing listening: GitUnreachable', async () => {
    const outcome = await writeVersion(request('x', { target: { url: 'http://127.0.0.1:1/x.git' } }));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnreachable' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain('refused the connection');
  });

  it('a path not in the repository: GitPathMissing; a field through a non-mapping: GitFieldInvalid', async () => {
    const name = server.newRepo({ 'values.yaml': 'staticExport: "off"\n' });
    expect(await writeVersion(request(name, { target: { path: 'deploy/missing.yaml' } }))).toEqual({
      outcome: 'Failed',
      reason: 'GitPathMissing',
      message: `deploy/missing.yaml is not in branch main of ${server.url(name)}`,
    });
    expect(await writeVersion(request(name, { target: { path: 'values.yaml' } }))).toEqual({
      outcome: 'Failed',
      reason: 'GitFieldInvalid',
      message: 'staticExport.version: staticExport is a scalar, not a mapping',
    });
    expect(count(name)).toBe(1);
  });

  it('a branch not on the remote: GitBranchMissing', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    expect(await writeVersion(request(name, { target: { branch: 'production' } }))).toEqual({
      outcome: 'Failed',
      reason: 'GitBranchMissing',
      message: `branch production is not in ${server.url(name)}`,
    });
  });

  it('ssh and plain http without permission: GitUnsupported before any traffic', async () => {
    const before = server.seen.length;
    const ssh = await writeVersion(request('x', { target: { url: 'git@github.com:org/gitops.git' } }));
    expect(ssh).toMatchObject({ outcome: 'Failed', reason: 'GitUnsupported' });
    if (ssh.outcome === 'Failed') expect(ssh.message).toContain('https://');
    const plain = await writeVersion(request('x', { allowInsecureHttp: false }));
    expect(plain).toMatchObject({ outcome: 'Failed', reason: 'GitUnsupported' });
    if (plain.outcome === 'Failed') expect(plain.message).toContain('--allow-insecure-git-url');
    expect(server.seen.length).toBe(before);
  });

  it('an aborted signal rejects with its reason and pushes nothing', async () => {
    const name = server.newRepo({ 'deploy/values.yaml': VALUES });
    const before = server.head(name);
    const controller = new AbortController();
    server.beforeReceivePack = () => controller.abort(new Error('release deleted'));
    await expect(writeVersion(request(name, { signal: controller.signal }))).rejects.toThrow(
      'release deleted',
    );
    expect(server.head(name)).toBe(before);
  });
});
