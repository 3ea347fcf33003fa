// Signed commits: a branch protected by a real pre-receive hook that runs `git verify-commit` with
// an allowed signers file (gpg.ssh.allowedSignersFile, as a forge's "require signed commits" does)
// refuses an unsigned write-back and accepts ours, signed with an SSH key (ed25519, RSA) in the
// SSHSIG format `git -c gpg.format=ssh commit -S` makes. The server's real git checks them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeVersion } from '../../src/git/write-version.ts';
import { AUTHOR, writeRequest } from '../support/fixtures/write-request.ts';
import { gitServerSuite } from '../support/servers/git-suite.ts';
import { type SshKeyPair, sshKeygen } from '../support/servers/ssh-git-server.ts';
import { tempDir } from '../support/temp.ts';

const USER = 'writer';
const PASSWORD = 'token-signed-0123456789';

const server = gitServerSuite('git-signed-', { username: USER, password: PASSWORD });
const keys = tempDir('signing-keys-');
const ed25519 = sshKeygen(keys, 'signer');
const rsa = sshKeygen(keys, 'signer-rsa', 'rsa');
const stranger = sshKeygen(keys, 'stranger');
const allowed = join(keys, 'allowed_signers');
writeFileSync(allowed, [ed25519, rsa].map((k) => `${AUTHOR.email} namespaces="git" ${k.public}\n`).join(''));

/** A repository whose main accepts only commits `git verify-commit` verifies. */
function protectedRepo(): string {
  const name = server.newRepo({ 'deploy/values.yaml': 'staticExport:\n  version: "sha256-old"\n' });
  server.preReceive(
    name,
    `while read old new ref; do
  for c in $(git rev-list "$old..$new"); do
    if ! git -c gpg.ssh.allowedSignersFile=${allowed} verify-commit "$c" >/dev/null 2>&1; then
      echo "GH006: Protected branch update failed: commit $c has no verified signature" >&2
      exit 1
    fi
  done
done`,
  );
  return name;
}

const request = (name: string, signingKey?: SshKeyPair) =>
  writeRequest(
    server.url(name),
    { kind: 'basic', username: USER, password: PASSWORD },
    signingKey ? { signingKey: { identity: signingKey.private } } : {},
  );

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
      const verified = server.git(
        name,
        '-c',
        `gpg.ssh.allowedSignersFile=${allowed}`,
        'log',
        '-1',
        '--format=%G?|%GS',
        'main',
      );
      expect(verified.trim()).toBe(`G|${AUTHOR.email}`);
      expect(server.git(name, 'cat-file', 'commit', 'main')).toContain(
        'gpgsig -----BEGIN SSH SIGNATURE-----',
      );
    },
  );

  it('a commit signed with a key the branch does not allow is refused', async () => {
    const outcome = await writeVersion(request(protectedRepo(), stranger));
    expect(outcome).toMatchObject({ outcome: 'Failed', reason: 'GitBranchProtected' });
  });
});
