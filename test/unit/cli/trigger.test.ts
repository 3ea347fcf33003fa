// `static-export trigger` before and around the call: bad input exits 2 before anything is sent,
// an unreachable receiver exits 6 saying what failed, an endless answer is not read, and the token never shows. Its calls to the real receiver are in
// test/integration/operator/trigger.test.ts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endlessBody, startFakeKubeApi } from '../../support/servers/fake-kube-api.ts';
import { runCli } from '../../support/tools/run-cli.ts';

const TOKEN = 'tt-0123456789abcdef0123456789abcdef';
let work: string;
let tokenFile: string;
let closedPort: number;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cli-trigger-'));
  tokenFile = join(work, 'token');
  await writeFile(tokenFile, `${TOKEN}\n`);
  // A port nothing listens on any more.
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closedPort = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('static-export trigger', () => {
  const url = () => `http://127.0.0.1:${closedPort}`;

  it.each([
    ['a release without namespace', ['--url', 'http://x', '--token-file', 'f', 'docs'], '<namespace>/<name>'],
    [
      'a release name in capitals',
      ['--url', 'http://x', '--token-file', 'f', 'docs/Docs'],
      '<namespace>/<name>',
    ],
    ['a URL that is no http(s) URL', ['--url', 'ftp://x', '--token-file', 'f', 'docs/docs'], '--url'],
    ['no --url', ['--token-file', 'f', 'docs/docs'], '--url'],
  ])('exits 2 for %s', async (_, args, named) => {
    const r = await runCli(['trigger', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(named);
  });

  it('exits 2 without a token, or with an empty or unreadable token file, naming where it looked', async () => {
    const none = await runCli(['trigger', '--url', url(), 'docs/docs']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No token: pass --token-file <file> or set STATIC_EXPORT_TRIGGER_TOKEN');
    const empty = join(work, 'empty');
    await writeFile(empty, '\n');
    const blank = await runCli(['trigger', '--url', url(), '--token-file', empty, 'docs/docs']);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain(`--token-file ${empty} holds no token (it is empty).`);
    const gone = await runCli(['trigger', '--url', url(), '--token-file', join(work, 'nope'), 'docs/docs']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain('cannot be read: ENOENT');
  });

  it('exits 6 when the receiver does not answer, and never prints the token', async () => {
    for (const args of [
      ['--token-file', tokenFile],
      ['--json', '--token-file', tokenFile],
    ]) {
      const r = await runCli(['trigger', '--url', url(), ...args, 'docs/docs']);
      expect(r.code).toBe(6);
      expect(r.stdout + r.stderr).toContain(
        `the receiver at ${url()} refused the connection (nothing listens at that address and port) [ECONNREFUSED]`,
      );
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
    }
    const fromEnv = await runCli(['trigger', '--url', url(), 'docs/docs'], {
      STATIC_EXPORT_TRIGGER_TOKEN: TOKEN,
    });
    expect(fromEnv.code).toBe(6);
  });

  it('says what failed when a receiver accepts the connection but never answers, or drops it', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    const rude = createServer((socket) => socket.destroy());
    const port = async (server: Server) => {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return (server.address() as { port: number }).port;
    };
    try {
      const slow = await runCli([
        'trigger',
        '--url',
        `http://127.0.0.1:${await port(silent)}`,
        '--timeout',
        '1s',
        '--token-file',
        tokenFile,
        'docs/docs',
      ]);
      expect(slow.code).toBe(6);
      expect(slow.stderr).toContain('did not answer within 1s (--timeout)');
      const dropped = await runCli([
        'trigger',
        '--url',
        `http://127.0.0.1:${await port(rude)}`,
        '--token-file',
        tokenFile,
        'docs/docs',
      ]);
      expect(dropped.code).toBe(6);
      expect(dropped.stderr).toMatch(
        /closed the connection without an answer \[(ECONNRESET|UND_ERR_SOCKET)\]/,
      );
      expect(slow.stderr + dropped.stderr).not.toContain('TypeError');
    } finally {
      for (const s of held) s.destroy();
      silent.close();
      rude.close();
    }
  });

  it('reads no more than a small answer from a receiver whose answer never ends', async () => {
    const sent = { bytes: 0 };
    const receiver = await startFakeKubeApi({ '/hooks/docs/docs': endlessBody(sent, 128 * 2 ** 20, 202) });
    try {
      const r = await runCli(['trigger', '--url', receiver.server, '--token-file', tokenFile, 'docs/docs']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('Export requested for docs/docs.\n');
      // 64 KiB read, and what socket buffers on loopback hold besides.
      expect(sent.bytes).toBeLessThan(16 * 2 ** 20);
    } finally {
      await receiver.close();
    }
  });

  it('the operator refuses a trigger receiver on the metrics port (exit 2) before it starts', async () => {
    const r = await runCli([
      'operator',
      '--trigger-address',
      '127.0.0.1:8080',
      '--kubeconfig',
      join(work, 'none'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--trigger-address must use another port than --metrics-address (both 8080)');
  });
});
