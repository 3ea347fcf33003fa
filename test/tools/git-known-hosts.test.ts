// known_hosts as OpenSSH reads it: which keys a host on a port may present. Keys and a hashed
// entry made with the real ssh-keygen (openssh-client).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostKeyAlgorithms, hostKeyKnown, knownHost } from '../../src/git/known-hosts.ts';
import { fingerprint } from '../../src/git/ssh-transport.ts';
import { sshKeygen } from '../support/servers/ssh-git-server.ts';
import { tempDir } from '../support/temp.ts';

const dir = tempDir('known-hosts-');
const a = sshKeygen(dir, 'a');
const b = sshKeygen(dir, 'b');
const rsa = sshKeygen(dir, 'rsa', 'rsa');
const field = (k: { public: string }) => k.public.split(' ').slice(0, 2).join(' ');
const blob = (k: { public: string }) => Buffer.from(k.public.split(' ')[1] ?? '', 'base64');

describe('known_hosts', () => {
  it('matches a host on port 22 by name, another port only as [host]:port', () => {
    const text = `github.com ${field(a)}\n[git.internal]:2222 ${field(b)}\n`;
    expect(hostKeyKnown(knownHost(text, 'github.com', 22), blob(a))).toBe(true);
    expect(hostKeyKnown(knownHost(text, 'GitHub.com', 22), blob(a))).toBe(true);
    expect(knownHost(text, 'github.com', 2222).keys).toEqual([]);
    expect(hostKeyKnown(knownHost(text, 'git.internal', 2222), blob(b))).toBe(true);
    expect(knownHost(text, 'git.internal', 22).keys).toEqual([]);
  });

  it('refuses a key the host is not listed with, and a revoked one', () => {
    const text = `github.com ${field(a)}\n@revoked * ${field(b)}\ngithub.com ${field(b)}\n`;
    const known = knownHost(text, 'github.com', 22);
    expect(hostKeyKnown(known, blob(b))).toBe(false);
    expect(hostKeyKnown(known, blob(rsa))).toBe(false);
    expect(hostKeyKnown(known, blob(a))).toBe(true);
  });

  it('reads host lists, wildcards and negations', () => {
    const text = `gitlab.com,github.com ${field(a)}\n*.example.com,!evil.example.com ${field(b)}\n`;
    expect(hostKeyKnown(knownHost(text, 'github.com', 22), blob(a))).toBe(true);
    expect(hostKeyKnown(knownHost(text, 'git.example.com', 22), blob(b))).toBe(true);
    expect(knownHost(text, 'evil.example.com', 22).keys).toEqual([]);
  });

  it('reads hashed entries as ssh-keygen -H writes them', () => {
    const file = join(dir, 'known_hosts');
    writeFileSync(file, `[127.0.0.1]:2222 ${field(a)}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file]);
    const hashed = execFileSync('cat', [file]).toString();
    expect(hashed).toMatch(/^\|1\|/);
    expect(hostKeyKnown(knownHost(hashed, '127.0.0.1', 2222), blob(a))).toBe(true);
    expect(knownHost(hashed, '127.0.0.1', 22).keys).toEqual([]);
  });

  it('offers only the algorithms of the listed keys (RSA with SHA-2 first); @cert-authority is counted, not used', () => {
    const text = `github.com ${field(rsa)}\n@cert-authority *.corp ${field(a)}\n# comment\n\ngarbage\n`;
    expect(hostKeyAlgorithms(knownHost(text, 'github.com', 22))).toEqual([
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
    ]);
    expect(knownHost(text, 'git.corp', 22)).toMatchObject({ keys: [], certificateAuthorities: 1 });
  });

  it('ignores a line whose key is not of the type it names', () => {
    expect(knownHost(`github.com ssh-rsa ${a.public.split(' ')[1]}\n`, 'github.com', 22).keys).toEqual([]);
  });

  it('fingerprints a key as ssh-keygen -l does', () => {
    const printed = execFileSync('ssh-keygen', ['-l', '-f', join(dir, 'a.pub')])
      .toString()
      .split(' ')[1];
    expect(fingerprint(blob(a))).toBe(printed);
  });
});
