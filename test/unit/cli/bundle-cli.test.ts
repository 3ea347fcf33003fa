// fetch, export and mirror through the real CLI: download deadline, exit codes of network
// failures, file modes under a strict umask, destinations it did not create, and the caps.
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../../scripts/run-process.ts';
import { MARKER_FILE } from '../../../src/bundle/destination.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { siteEntries, tarGz } from '../../support/fixtures/tar-fixtures.ts';
import { MAIN, NODE, runCli } from '../../support/tools/run-cli.ts';
import { refusedUrl, serveDrip } from '../bundle/serve.ts';

let work: string;
let site: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'bundle-cli-test-'));
  site = join(work, 'site.tar.gz');
  await writeFile(site, tarGz(siteEntries()));
});
afterAll(() => rm(work, { recursive: true, force: true }));

const fileUrl = (path: string) => ({ STATIC_EXPORT_BUNDLE_URL: pathToFileURL(path).toString() });

describe('fetch: deadline and network failures', () => {
  it('exits 6 when a dripping server outlasts --timeout, leaving nothing behind', async () => {
    const drip = await serveDrip(tarGz(siteEntries()), 200);
    try {
      const dir = join(work, 'drip');
      await mkdir(dir);
      const result = await runCli(['fetch', '--dest', join(dir, 'site'), '--timeout', '2s'], {
        STATIC_EXPORT_BUNDLE_URL: drip.url,
      });
      expect(result.code, result.stderr).toBe(6);
      expect(result.stderr).toContain('did not finish within 2 s');
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await drip.close();
    }
  });

  it('--retries n attempts again n times: --retries 2 is three attempts, as the help says', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests += 1;
      res.writeHead(503).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    try {
      const result = await runCli(['fetch', '--dest', join(work, 'unavailable'), '--retries', '2'], {
        STATIC_EXPORT_BUNDLE_URL: `http://127.0.0.1:${port}/bundle.tar.gz`,
      });
      expect(result.code, result.stderr).not.toBe(0);
      expect(requests).toBe(3);
      expect(result.stderr).toContain('failed after 3 attempts');
    } finally {
      server.close();
    }
    const { stdout: help } = await runCli(['fetch', '--help']);
    expect(help.replace(/\s+/g, ' ')).toContain(
      'attempts again after a failed download attempt, up to n times in a row',
    );
  });

  it('exits 6 when the bundle server refuses connections', async () => {
    const result = await runCli(['fetch', '--dest', join(work, 'refused'), '--retries', '0'], {
      STATIC_EXPORT_BUNDLE_URL: await refusedUrl(),
    });
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toMatch(/ECONNREFUSED|connect/);
  });
});

describe('fetch: files another user can read', () => {
  it('writes directories 0755 and files 0644 under umask 077', async () => {
    const dest = join(work, 'umask');
    // The shell sets the umask, then becomes the CLI: the process runs exactly as an init container would.
    const result = await runProcess(
      'sh',
      ['-c', 'umask 077 && exec "$0" "$@"', NODE, MAIN, 'fetch', '--dest', dest],
      {
        env: { PATH: process.env.PATH ?? '', ...fileUrl(site) },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const mode = async (path: string) => (await stat(join(dest, path))).mode & 0o777;
    expect(await mode('.')).toBe(0o755);
    expect(await mode('guides')).toBe(0o755);
    expect(await mode('index.html')).toBe(0o644);
    expect(await mode('guides/start.html')).toBe(0o644);
    expect(await mode(MARKER_FILE)).toBe(0o644);
  });
});

describe('fetch: destinations it did not create', () => {
  it('exits 2 naming --dest and --force for a non-empty directory, deleting nothing', async () => {
    const dest = join(work, 'mine');
    await mkdir(dest);
    await writeFile(join(dest, 'notes.txt'), 'keep me');
    const result = await runCli(['fetch', '--dest', dest], fileUrl(site));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--dest');
    expect(result.stderr).toContain('--force');
    expect(await readdir(dest)).toEqual(['notes.txt']);
    expect(await readdir(work)).not.toContainEqual(expect.stringMatching(/^\.mine\./));

    const forced = await runCli(['fetch', '--dest', dest, '--force'], fileUrl(site));
    expect(forced.code, forced.stderr).toBe(0);
    expect((await readdir(dest)).sort()).toEqual([MARKER_FILE, 'assets', 'guides', 'index.html']);
  });

  it('replaces what it extracted before without --force', async () => {
    const dest = join(work, 'again');
    expect((await runCli(['fetch', '--dest', dest], fileUrl(site))).code).toBe(0);
    const second = await runCli(['fetch', '--dest', dest], fileUrl(site));
    expect(second.code, second.stderr).toBe(0);
  });
});

describe('fetch: caps', () => {
  it('refuses a compression bomb with exit 5 unless --max-compression-ratio allows it', async () => {
    const bomb = join(work, 'zeros.tar.gz');
    await writeFile(bomb, tarGz([{ path: 'zeros.bin', content: Buffer.alloc(32 * 1024 * 1024) }], 1));
    const refused = await runCli(
      ['fetch', '--dest', join(work, 'bomb'), '--min-pages', '0', '--allow-missing-index'],
      fileUrl(bomb),
    );
    expect(refused.code, refused.stderr).toBe(5);
    expect(refused.stderr).toContain('compression ratio exceeds 150');
    const allowed = await runCli(
      [
        'fetch',
        '--dest',
        join(work, 'bomb'),
        '--min-pages',
        '0',
        '--allow-missing-index',
        '--max-compression-ratio',
        '1000',
      ],
      fileUrl(bomb),
    );
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it('applies --max-entries and --max-extracted-bytes', async () => {
    const entries = await runCli(
      ['fetch', '--dest', join(work, 'cap1'), '--max-entries', '2'],
      fileUrl(site),
    );
    expect(entries.code).toBe(5);
    expect(entries.stderr).toContain('more than 2 entries');
    const bytes = await runCli(
      ['fetch', '--dest', join(work, 'cap2'), '--max-extracted-bytes', '16'],
      fileUrl(site),
    );
    expect(bytes.code).toBe(5);
    expect(bytes.stderr).toContain('exceeds 16 bytes');
  });

  it('exits 2 naming the flag for a cap that is not a size or count', async () => {
    for (const [flag, value] of [
      ['--max-archive-bytes', '2GB-ish'],
      ['--max-compression-ratio', '0'],
      ['--timeout', '0s'],
    ]) {
      const result = await runCli(
        ['fetch', '--dest', join(work, 'x'), flag as string, value as string],
        fileUrl(site),
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(flag);
    }
  });
});

describe('export --out and mirror', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 0 });
  });
  afterAll(() => sim.close());

  it('export refuses a non-empty --out it did not create before starting an export', async () => {
    const out = join(work, 'out');
    await mkdir(out);
    await writeFile(join(out, 'notes.txt'), 'keep me');
    const before = sim.requests.length;
    const result = await runCli(['export', '--domain', 'docs.example.com', '--out', out], {
      STATIC_EXPORT_API_URL: sim.baseUrl,
      STATIC_EXPORT_API_KEY: sim.adminKey,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--out');
    expect(await readFile(join(out, 'notes.txt'), 'utf8')).toBe('keep me');
    expect(sim.requests.length).toBe(before);
  });

  it('mirror refuses an unsafe archive and leaves nothing in the mirror tree', async () => {
    const evil = join(work, 'evil.tar.gz');
    await writeFile(evil, tarGz([...siteEntries(), { path: '../escape.txt', content: 'x' }]));
    const mirror = join(work, 'mirror');
    const result = await runCli(['mirror', '--dir', mirror, '--domain', 'docs.example.com'], fileUrl(evil));
    expect(result.code, result.stderr).toBe(5);
    expect(await readdir(join(mirror, 'docs.example.com'))).toEqual([]);
  });
});
