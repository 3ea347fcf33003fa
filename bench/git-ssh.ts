// Git write-back over SSH against the same over HTTPS-style smart HTTP: the `history` repository of
// bench/git-write-back.ts (10,000 commits, a 1 MB tip) served by Debian's sshd through git-shell and
// by git http-backend, side by side on loopback. Prints the median commit latency of a few writes
// each way and the peak RSS of a child process doing one write each way (compiled JS, as shipped).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { GitCredentials } from '../src/git/types.ts';
import { writeVersion } from '../src/git/write-version.ts';
import { writeRequest } from '../test/support/fixtures/write-request.ts';
import { GitServer, runGit } from '../test/support/servers/git-server.ts';
import { SshGitServer, sshKeygen } from '../test/support/servers/ssh-git-server.ts';
import { BUILD, buildCli } from './build.ts';
import { buildRepository, mib, PASSWORD, USER } from './git-write-back.ts';

const WRITES = 5;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const request = (url: string, credentials: GitCredentials, version: string) =>
  writeRequest(url, credentials, { version, timeoutMs: 300_000 });

async function childWrite(
  req: ReturnType<typeof request>,
): Promise<{ outcome: string; ms: number; maxRssKb: number }> {
  const module = pathToFileURL(join(BUILD, 'git/write-version.js')).href;
  const code = `
    const { writeVersion } = await import(${JSON.stringify(module)});
    const started = performance.now();
    const outcome = await writeVersion(${JSON.stringify(req)});
    console.log(JSON.stringify({ outcome: outcome.outcome === 'Failed' ? outcome.message : outcome.outcome, ms: performance.now() - started, maxRssKb: process.resourceUsage().maxRSS }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code]);
  return JSON.parse(stdout.trim());
}

export async function run(): Promise<void> {
  await buildCli();
  const cached = await buildRepository('history');
  const root = mkdtempSync(join(tmpdir(), 'git-ssh-bench-'));
  const http = await new GitServer(root, { username: USER, password: PASSWORD }).start();
  const ssh = new SshGitServer();
  const key = sshKeygen(ssh.dir, 'bench-deploy');
  ssh.authorize(key.public);
  await ssh.start();
  try {
    const ways: [string, string, GitCredentials][] = [];
    for (const [name, server] of [
      ['https', http],
      ['ssh', ssh.repos],
    ] as const) {
      runGit(['clone', '--quiet', '--bare', '--shared', cached, server.gitDir('history')]);
      runGit(['config', 'http.receivepack', 'true'], { cwd: server.gitDir('history') });
      ways.push(
        name === 'https'
          ? [name, http.url('history'), { kind: 'basic', username: USER, password: PASSWORD }]
          : [name, ssh.url('history'), { kind: 'ssh', identity: key.private, knownHosts: ssh.knownHosts() }],
      );
    }
    for (const [name, url, credentials] of ways) {
      const times: number[] = [];
      for (let i = 1; i <= WRITES; i++) {
        const t = performance.now();
        const outcome = await writeVersion(request(url, credentials, `sha256-${name}-${i}`));
        if (outcome.outcome !== 'Committed')
          throw new Error(`${name} write ${i}: ${JSON.stringify(outcome)}`);
        times.push(performance.now() - t);
      }
      const child = await childWrite(request(url, credentials, `sha256-${name}-child`));
      console.log(
        `${name}: commit latency median ${median(times).toFixed(0)} ms of ${WRITES} writes (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}); one write in a child process: ${child.outcome} in ${child.ms.toFixed(0)} ms, peak RSS ${mib(child.maxRssKb * 1024)}`,
      );
    }
  } finally {
    await http.stop();
    await ssh.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
