// Signed commits with an SSH key, as `git -c gpg.format=ssh commit -S` makes them: the commit's
// gpgsig header holds an armored SSHSIG signature (OpenSSH's PROTOCOL.sshsig, namespace "git",
// SHA-512) over the commit without it, which `git verify-commit` checks against an allowed
// signers file and GitHub, GitLab and Gitea show as verified. ed25519 and RSA keys (rsa-sha2-512);
// ssh2 reads the OpenSSH private key format, node:crypto signs. OpenPGP (Flux's git.asc) would need
// openpgp.js: not supported.
import { createHash } from 'node:crypto';
import { GitFailure } from './types.ts';

export interface SshSigningKey {
  /** OpenSSH or PEM private key. */
  identity: string;
  passphrase?: string;
}

/** isomorphic-git's commit signing callback. */
export type CommitSigner = (args: { payload: string }) => Promise<{ signature: string }>;

interface ParsedKey {
  type: string;
  sign(data: Buffer, algo?: string): Buffer | Error;
  getPublicSSH(): Buffer;
}

/** The signer for `key`; refuses a key it cannot sign with, naming why (never the key). */
export async function sshCommitSigner(key: SshSigningKey): Promise<CommitSigner> {
  const { utils } = await import('ssh2');
  const parsed = utils.parseKey(key.identity, key.passphrase);
  const k = (Array.isArray(parsed) ? parsed[0] : parsed) as ParsedKey | Error | undefined;
  if (!k || k instanceof Error)
    throw new GitFailure(
      'GitUnsupported',
      `the signing key (identity in spec.gitWriteBack.signingKey's Secret) cannot be read (${k instanceof Error ? k.message : 'no key'}): put an OpenSSH or PEM ed25519 or RSA private key there, its passphrase in password`,
    );
  const algorithm = k.type === 'ssh-ed25519' ? undefined : k.type === 'ssh-rsa' ? 'sha512' : null;
  if (algorithm === null)
    throw new GitFailure(
      'GitUnsupported',
      `the signing key is a ${k.type} key: commits are signed with ed25519 or RSA keys`,
    );
  const signatureName = k.type === 'ssh-rsa' ? 'rsa-sha2-512' : k.type;
  const publicKey = k.getPublicSSH();
  return async ({ payload }) => {
    const signed = Buffer.concat([
      Buffer.from('SSHSIG'),
      sshString('git'),
      sshString(''),
      sshString('sha512'),
      sshString(createHash('sha512').update(payload, 'utf8').digest()),
    ]);
    const raw = k.sign(signed, algorithm);
    if (raw instanceof Error)
      throw new GitFailure('GitUnsupported', `signing the commit failed (${raw.message})`);
    const blob = Buffer.concat([
      Buffer.from('SSHSIG'),
      uint32(1),
      sshString(publicKey),
      sshString('git'),
      sshString(''),
      sshString('sha512'),
      sshString(Buffer.concat([sshString(signatureName), sshString(raw)])),
    ]);
    const lines = blob.toString('base64').match(/.{1,70}/g) ?? [];
    return { signature: `-----BEGIN SSH SIGNATURE-----\n${lines.join('\n')}\n-----END SSH SIGNATURE-----\n` };
  };
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function sshString(value: string | Buffer): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([uint32(bytes.length), bytes]);
}
