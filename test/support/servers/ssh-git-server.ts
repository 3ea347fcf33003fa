// A real SSH Git server on loopback: Debian's OpenSSH sshd (openssh-server) with its own host key,
// serving bare repositories through git-shell, as a Git host serves deploy keys. It runs as root
// (the machine's tests do) and lets root in only with a listed key whose authorized_keys line
// forces git-shell, so a key can run git-upload-pack / git-receive-pack and nothing else. Its
// directory lies under root's home, where every path component is root's and not writable by
// others, as sshd's StrictModes wants. LogLevel DEBUG1 logs each authentication request: a test
// reads the log to prove a refused host never got one.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { GitServer } from './git-server.ts';

export const SSHD = '/usr/sbin/sshd';

/** An OpenSSH key pair made by the real ssh-keygen. */
export interface SshKeyPair {
  /** OpenSSH private key format, as `ssh-keygen` writes it and Flux's `identity` holds it. */
  private: string;
  /** `ssh-ed25519 AAAA… comment`. */
  public: string;
}

export function sshKeygen(dir: string, name: string, type = 'ed25519', passphrase = ''): SshKeyPair {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', passphrase, '-C', name, '-f', file]);
  return { private: readFileSync(file, 'utf8'), public: readFileSync(`${file}.pub`, 'utf8').trim() };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

export class SshGitServer {
  readonly dir: string;
  /** Bare repositories (made with the real git), reachable at their absolute paths. */
  readonly repos: GitServer;
  readonly hostKey: SshKeyPair;
  port = 0;
  private process: ChildProcess | undefined;
  private readonly authorized: string[] = [];

  constructor() {
    const parent = join(homedir(), '.cache', 'static-export-operator');
    mkdirSync(parent, { recursive: true, mode: 0o755 });
    this.dir = mkdtempSync(join(parent, 'sshd-'));
    chmodSync(this.dir, 0o755);
    mkdirSync(join(this.dir, 'repos'));
    this.repos = new GitServer(join(this.dir, 'repos'));
    this.hostKey = sshKeygen(this.dir, 'host_ed25519');
  }

  /** Lets `publicKey` run git-shell commands (a deploy key). */
  authorize(publicKey: string): void {
    this.authorized.push(
      `command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"",no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-pty ${publicKey}`,
    );
    writeFileSync(join(this.dir, 'authorized_keys'), `${this.authorized.join('\n')}\n`, { mode: 0o600 });
  }

  async start(): Promise<this> {
    // Debian's sshd refuses to start without its privilege separation directory.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    this.port = await freePort();
    if (this.authorized.length === 0) writeFileSync(join(this.dir, 'authorized_keys'), '', { mode: 0o600 });
    const config = join(this.dir, 'sshd_config');
    writeFileSync(
      config,
      [
        `ListenAddress 127.0.0.1:${this.port}`,
        `HostKey ${join(this.dir, 'host_ed25519')}`,
        `PidFile ${join(this.dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${join(this.dir, 'authorized_keys')}`,
        'PermitRootLogin forced-commands-only',
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes yes',
        'LogLevel DEBUG1',
        'MaxStartups 100',
        'AllowTcpForwarding no',
        'X11Forwarding no',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    execFileSync(SSHD, ['-t', '-f', config]);
    this.process = spawn(SSHD, ['-D', '-f', config, '-E', this.logFile], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!this.log().includes('Server listening on')) {
      if (Date.now() > deadline) throw new Error(`sshd did not start: ${this.log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this;
  }

  get logFile(): string {
    return join(this.dir, 'sshd.log');
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** `ssh://root@127.0.0.1:PORT/abs/path/name.git`. */
  url(name: string): string {
    return `ssh://root@127.0.0.1:${this.port}${this.repos.gitDir(name)}`;
  }

  /** The known_hosts line for this server (`[127.0.0.1]:PORT ssh-ed25519 …`). */
  knownHosts(key = this.hostKey): string {
    const [type, blob] = key.public.split(' ');
    return `[127.0.0.1]:${this.port} ${type} ${blob}\n`;
  }

  async stop(): Promise<void> {
    const p = this.process;
    if (p && p.exitCode === null) {
      const exited = new Promise((resolve) => p.once('exit', resolve));
      p.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
