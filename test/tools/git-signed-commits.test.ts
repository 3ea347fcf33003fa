// Signed commits: a branch protected by a real pre-receive hook that runs `git verify-commit` with
// an allowed signers file (gpg.ssh.allowedSignersFile, as a forge's "require signed commits" does)
// refuses an unsigned write-back and accepts ours, signed with an SSH key (ed25519, RSA) in the
// SSHSIG format `git -c gpg.format=ssh commit -S` makes. The server's real git checks them.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteVersionRequest } from '../../src/git/types.ts';
import { writeVersion } from '../../src/git/write-version.ts';
import { GitServer, runGit } from '../support/servers/git-server.ts';
import { type SshKeyPair, sshKeygen } from '../support/servers/ssh-git-server.ts';
import { tempDir } from '../support/temp.ts';

const USER = 'writer';
const PASSWORD = 'token-signed-0123456789';
const EMAIL = 'static-export-operator@users.noreply.github.com';

let server: GitServer;
let ed25519: SshKeyPair;
let rsa: SshKeyPair;
let stranger: SshKeyPair;
let allowed: string;
let repoCount = 0;

beforeAll(async () => {
  const keys = tempDir('signing-keys-');
  ed25519 = sshKeygen(keys, 'signer');
  rsa = sshKeygen(keys, 'signer-rsa', 'rsa');
  stranger = sshKeygen(keys, 'stranger');
  allowed = join(keys, 'allowed_signers');
  writeFileSync(allowed, [ed25519, rsa].map((k) => `${EMAIL} namespaces="git" ${k.public}\n`).join(''));
  server = await new GitServer(tempDir('git-signed-'), { username: USER, password: PASSWORD }).start();
});
afterAll(() => server?.stop());

/** A repository whose main accepts only commits `git verify-commit` verifies. */
function protectedRepo(): string {
  const name = `signed-${++repoCount}`;
  server.createRepo(name, { 'values.yaml': 'staticExport:\n  version: "sha256-old"\n' });
  const hook = join(server.gitDir(name), 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh
while read old new ref; do
  for c in $(git rev-list "$old..$new"); do
    if ! git -c gpg.ssh.allowedSignersFile=${allowed} verify-commit "$c" >/dev/null 2>&1; then
      echo "GH006: Protected branch update failed: commit $c has no verified signature" >&2
      exit 1
    fi
  done
done
`,
  );
  chmodSync(hook, 0o755);
  return name;
}

function request(name: string, signingKey?: SshKeyPair): WriteVersionRequest {
  return {
    target: { url: server.url(name), branch: 'main', path: 'values.yaml', field: 'staticExport.version' },
    credentials: { kind: 'basic', username: USER, password: PASSWORD },
    version: 'sha256-new',
    author: { name: 'static-export-operator', email: EMAIL },
    message: 'docs: serve sha256-new',
    allowInsecureHttp: true,
    ...(signingKey ? { signingKey: { identity: signingKey.private } } : {}),
  };
}

const git = (name: string, ...args: string[]) => runGit(args, { cwd: server.gitDir(name) });

describe('signed commits against a branch requiring them', () => {
  it('an unsigned commit is refused by the hook (GitBranchProtected, its words)', async () => {
    const outcome = await writeVersion(request(protectedRepo()));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
    expect(outcome.outcome === 'Failed' && outcome.message).toContain('has no verified signature');
  });

  it.each([
    ['ed25519', () => ed25519],
    ['RSA', () => rsa],
  ])(
    'a commit signed with an %s key is accepted, and git verifies it as the allowed signer',
    async (_type, key) => {
      const name = protectedRepo();
      const outcome = await writeVersion(request(name, key()));
      expect(outcome).toMatchObject({ outcome: 'Committed' });
      const verified = runGit(
        ['-c', `gpg.ssh.allowedSignersFile=${allowed}`, 'log', '-1', '--format=%G?|%GS', 'main'],
        {
          cwd: server.gitDir(name),
        },
      );
      expect(verified.trim()).toBe(`G|${EMAIL}`);
      expect(git(name, 'cat-file', 'commit', 'main')).toContain('gpgsig -----BEGIN SSH SIGNATURE-----');
    },
  );

  it('a commit signed with a key the branch does not allow is refused', async () => {
    const outcome = await writeVersion(request(protectedRepo(), stranger));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
  });
});
