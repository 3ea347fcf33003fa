// writeVersion against hostile repositories and servers, built as an attacker builds them and served
// by the real git http-backend on loopback: what a repository inflates to, a push answer of one
// endless line, a server echoing the credentials in the encodings it was sent them. Each fails
// that one write with a reason, in bounded time, and nothing of the token reaches the message.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { WriteVersionOutcome } from '../../src/git/types.ts';
import { writeVersion } from '../../src/git/write-version.ts';
import {
  deltaBombRepo,
  HOSTILE_VALUES,
  manyFilesRepo,
  manyRefsRepo,
  zeroFilledRepo,
} from '../support/fixtures/git-packs.ts';
import { type WriteRequestOverrides, writeRequest } from '../support/fixtures/write-request.ts';
import { gitServerSuite } from '../support/servers/git-suite.ts';

const USER = 'writer';
// 34 characters, as the token.
const PASSWORD = 'ghp_S3cr3tT0kenValue0123456789abcd';
const MIB = 1024 * 1024;

const server = gitServerSuite('git-hostile-', { username: USER, password: PASSWORD });
let count = 0;

const request = (name: string, overrides: WriteRequestOverrides = {}) =>
  writeRequest(server.url(name), { kind: 'basic', username: USER, password: PASSWORD }, overrides);

/** No piece of the token, in any encoding a server may echo, of 8 characters or more. */
function expectNoTokenPiece(outcome: WriteVersionOutcome): void {
  const text = JSON.stringify(outcome);
  const forms = [
    PASSWORD,
    `${USER}:${PASSWORD}`,
    Buffer.from(`${USER}:${PASSWORD}`).toString('base64'),
    Buffer.from(PASSWORD).toString('base64'),
    encodeURIComponent(`${USER}:${PASSWORD}`),
  ];
  for (const form of forms)
    for (let i = 0; i + 8 <= form.length; i++) expect(text).not.toContain(form.slice(i, i + 8));
}

describe('a repository built to inflate: that write fails GitUnsupported, nothing else', () => {
  it.each([
    [
      'a tip holding a 64 MiB zero-filled file (64 KB of pack)',
      (name: string) => zeroFilledRepo(server, name, 64 * MIB),
      'inflates to over 32 MiB',
    ],
    [
      'a hand-made pack whose delta of copies builds a 64 MiB file',
      (name: string) => deltaBombRepo(server, name, 1024),
      'inflates to over 32 MiB',
    ],
    [
      'a tip of 10,500 small files',
      (name: string) => manyFilesRepo(server, name, 10_500),
      /holds 10\d{3} objects \(files and directories\), over 10000/,
    ],
  ] as const)('%s', async (_title, build, why) => {
    const name = `inflating-${++count}`;
    build(name);
    const before = server.head(name);
    const outcome = await writeVersion(request(name));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitUnsupported' });
    if (outcome.outcome !== 'Failed') return;
    expect(outcome.message).toMatch(why);
    // Named by its repository (origin and path), as every write-back message names it since SSH.
    expect(outcome.message).toContain(`${server.url(name)} sent a branch tip that`);
    expect(server.head(name)).toBe(before);
    // The same server's ordinary repository is still written: only that release failed.
    const fine = `fine-${count}`;
    server.createRepo(fine, { 'deploy/values.yaml': HOSTILE_VALUES });
    expect(await writeVersion(request(fine))).toMatchObject({ outcome: 'Committed' });
  });

  it('a ref advertisement of 70,000 branches (5 MB): refused before it is parsed', async () => {
    const name = `refs-${++count}`;
    manyRefsRepo(server, name, 70_000);
    const outcome = await writeVersion(request(name));
    expect(outcome).toEqual({
      outcome: 'Failed',
      reason: 'GitUnsupported',
      message: `${server.origin} sent a ref advertisement over 4 MiB: a repository with this many branches and tags is not written back (every ref is held in memory); keep the values file in a repository with fewer refs`,
    });
  });
});

describe('a push refused with one endless line: read no further than 64 KiB, the deadline holds', () => {
  it.each([
    [
      '384 KiB of "cannot lock ref " (quadratic for a backtracking regex)',
      `yes 'cannot lock ref ' | head -n 24576 | tr -d '\\n'`,
    ],
    ['2 MiB of one letter', `head -c 2097152 /dev/zero | tr '\\0' x`],
  ])('%s: GitUnsupported within the deadline', async (_title, line) => {
    const name = `long-line-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': HOSTILE_VALUES });
    server.preReceive(name, `${line} >&2; echo >&2; exit 1`);
    const started = Date.now();
    const outcome = await writeVersion(request(name, { timeoutMs: 5_000 }));
    expect(outcome).toEqual({
      outcome: 'Failed',
      reason: 'GitUnsupported',
      message: `${server.origin} sent an answer to the push over 64 KiB: so much server output is not read (did the push land? the next write-back will tell)`,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a line under the bound: quoted cut to 200 characters', async () => {
    const name = `cut-line-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': HOSTILE_VALUES });
    server.preReceive(name, `yes 'cannot lock ref ' | head -n 3000 | tr -d '\\n' >&2; echo >&2; exit 1`);
    const outcome = await writeVersion(request(name, { timeoutMs: 5_000 }));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
    if (outcome.outcome === 'Failed')
      expect(outcome.message).toMatch(/refused the push: (cannot lock ref )+[a-z ]*…$/);
  });
});

describe('a server echoing the credentials: redacted in every form, before the reason is cut', () => {
  it('the token straddling the 200-character cut: none of it reaches the message', async () => {
    const name = `straddle-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': HOSTILE_VALUES });
    server.protect(name, 'main', `${'x'.repeat(170)}${PASSWORD} rejected`);
    const outcome = await writeVersion(request(name));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain(`${'x'.repeat(170)}[REDACTED]`);
    expectNoTokenPiece(outcome);
  });

  it.each([
    ['base64 of username:password, without "Basic "', Buffer.from(`${USER}:${PASSWORD}`).toString('base64')],
    ['base64 of the token', Buffer.from(PASSWORD).toString('base64')],
    ['base64 without its padding', Buffer.from(`${USER}:${PASSWORD}`).toString('base64').replace(/=+$/, '')],
    ['URL-safe base64', Buffer.from(`${USER}:${PASSWORD}`).toString('base64url')],
    ['URL-encoded', encodeURIComponent(`${USER}:${PASSWORD}`)],
  ])('%s', async (_title, echoed) => {
    const name = `echo-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': HOSTILE_VALUES });
    server.protect(name, 'main', `denied: credentials ${echoed} are read-only`);
    const outcome = await writeVersion(request(name));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
    if (outcome.outcome === 'Failed') expect(outcome.message).toContain('denied: credentials [REDACTED]');
    expectNoTokenPiece(outcome);
  });
});

describe('the values file stays byte for byte and reads back as the version', () => {
  const showBytes = (name: string) =>
    execFileSync('git', ['show', 'main:deploy/values.yaml'], { cwd: server.gitDir(name) });

  it('a Latin-1 comment and an empty value before a comment: only the value bytes change', async () => {
    const before = Buffer.from(
      '# r\xe9glages du site\nstaticExport:\n  version: # set by static-export\n',
      'latin1',
    );
    const name = `bytes-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': before });
    expect(await writeVersion(request(name))).toMatchObject({ outcome: 'Committed' });
    expect(showBytes(name)).toEqual(
      Buffer.from(
        '# r\xe9glages du site\nstaticExport:\n  version: sha256-new # set by static-export\n',
        'latin1',
      ),
    );
  });

  it('an explicit !!int tag: dropped, the file reads the version as a string', async () => {
    const name = `tag-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': 'staticExport:\n  version: !!int 1\n' });
    expect(await writeVersion(request(name))).toMatchObject({ outcome: 'Committed' });
    expect(showBytes(name).toString()).toBe('staticExport:\n  version: sha256-new\n');
  });

  it('an Argo CD override file naming the parameter twice: GitFieldInvalid, nothing pushed', async () => {
    const path = 'apps/docs/.argocd-source-docs.yaml';
    const name = `dup-${++count}`;
    server.createRepo(name, {
      [path]:
        'helm:\n  parameters:\n  - name: staticExport.version\n    value: a\n  - name: staticExport.version\n    value: b\n',
    });
    const before = server.head(name);
    const outcome = await writeVersion(request(name, { target: { path } }));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitFieldInvalid' });
    expect(server.head(name)).toBe(before);
  });
});

describe('what the spec admits, git takes', () => {
  it('an author and message with non-ASCII letters and tabs: the commit passes git fsck --strict', async () => {
    const name = `fsck-${++count}`;
    server.createRepo(name, { 'deploy/values.yaml': HOSTILE_VALUES });
    const outcome = await writeVersion(
      request(name, {
        author: { name: 'Dökümantasyon Bötü', email: 'docs.bot+ci@example.com' },
        message: 'docs: serve sha256-new\n\n\tpublished by default/docs',
      }),
    );
    expect(outcome).toMatchObject({ outcome: 'Committed' });
    server.git(name, 'fsck', '--strict', '--no-dangling');
  });
});
