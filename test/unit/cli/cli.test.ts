import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { contentVersion } from '../../../src/bundle/index.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';
import { type CliResult, MAIN, NODE, runCli } from '../../support/tools/run-cli.ts';

let sim: Simulator;
let work: string;
let api: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 300, agentJobDurationMs: 200 });
  work = await mkdtemp(join(tmpdir(), 'cli-test-'));
  api = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
});
afterAll(async () => {
  await sim.close();
  await rm(work, { recursive: true, force: true });
});

/** Neither the admin key nor any presigned query may appear. */
function expectNoSecrets(text: string): void {
  expect(text).not.toContain(sim.adminKey);
  expect(text).not.toMatch(/[?&](sig|expires)=/);
}

function expectUsage(result: CliResult, flag: string): void {
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(flag);
}

it('prints the version of package.json with --version', async () => {
  const { version } = JSON.parse(await readFile(join(import.meta.dirname, '../../../package.json'), 'utf8'));
  const result = await runCli(['--version']);
  expect(result.code).toBe(0);
  expect(result.stdout).toBe(`${version}\n`);
});

describe('static-export export', () => {
  it('exports, extracts into --out and writes the values file', async () => {
    const out = join(work, 'site');
    const valuesFile = join(work, 'values.yaml');
    // Long enough that a slowly starting CLI still polls the job while it runs.
    sim.configure({ exportDurationMs: 3000 });
    const result = await runCli(
      [
        'export',
        '--domain',
        'docs.example.com',
        '--out',
        out,
        '--values-out',
        valuesFile,
        '--poll-interval',
        '100ms',
      ],
      api,
    ).finally(() => sim.configure({ exportDurationMs: 300 }));
    expect(result.code, result.stderr).toBe(0);
    const values = parse(await readFile(valuesFile, 'utf8')) as {
      staticExport: { enabled: boolean; bundleUrl: string; version: string };
    };
    expect(values.staticExport.enabled).toBe(true);
    expect(values.staticExport.version).toBe((await contentVersion(out)).version);
    expect((await stat(valuesFile)).mode & 0o777).toBe(0o600);
    // The link in the values works: it is what the site chart will fetch.
    expect((await fetch(values.staticExport.bundleUrl, { method: 'HEAD' })).status).toBe(200);
    // Non-TTY progress: plain lines with percentages on stderr.
    expect(result.stderr).toMatch(/\d+%.*running/);
    // One duration for the job: the completion line's, not also the wait's on a last progress line.
    expect(result.stderr.match(/completed\b.*\d+s/g)).toEqual([expect.stringMatching(/^completed in \d+s$/)]);
    expectNoSecrets(result.stdout + result.stderr);
  });

  it('prints the values block on stdout when there is no --values-out, and nothing secret elsewhere', async () => {
    const result = await runCli(['export', '--domain', 'docs.example.com', '--poll-interval', '100ms'], api);
    expect(result.code, result.stderr).toBe(0);
    const values = parse(result.stdout) as { staticExport: { bundleUrl: string; version: string } };
    expect(values.staticExport.bundleUrl).toMatch(/sig=/);
    expect(values.staticExport.version).toMatch(/^sha256-[0-9a-f]{64}$/);
    expectNoSecrets(result.stderr);
  });

  it('emits JSON lines with --json, without the link when --values-out is given', async () => {
    const result = await runCli(
      [
        'export',
        '--domain',
        'docs.example.com',
        '--json',
        '--values-out',
        join(work, 'v2.yaml'),
        '--poll-interval',
        '100ms',
      ],
      api,
    );
    expect(result.code, result.stderr).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string });
    expect(events[0]?.event).toBe('started');
    expect(events.some((e) => e.event === 'progress')).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'done', version: expect.stringMatching(/^sha256-/) });
    expectNoSecrets(result.stdout + result.stderr);
  });

  it('exits 4 when the export fails', async () => {
    const result = await runCli(['export', '--domain', 'fail.example.com', '--poll-interval', '100ms'], api);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('failed');
  });

  it('exits 3 on a key the API refuses, without echoing it', async () => {
    const wrong = 'mint_0123456789abcdef0123456789abcdef';
    const result = await runCli(['export', '--domain', 'docs.example.com'], {
      ...api,
      STATIC_EXPORT_API_KEY: wrong,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('401');
    expect(result.stdout + result.stderr).not.toContain(wrong);
  });

  it('exits 3 on a public assistant key', async () => {
    const keyFile = join(work, 'public.key');
    await writeFile(keyFile, 'mint_dsc_0123456789abcdef\n');
    const result = await runCli(['export', '--domain', 'docs.example.com', '--key-file', keyFile], {
      STATIC_EXPORT_API_URL: sim.baseUrl,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('public assistant key');
    expect(result.stderr).not.toContain('0123456789abcdef');
  });

  it.each([
    [['export', '--domain', 'docs.example.com', '--poll-interval', 'soon'], '--poll-interval'],
    [['export', '--domain', 'https://docs.example.com/'], '--domain'],
    [['export'], '--domain'],
    [['export', '--domain', 'docs.example.com', '--bogus'], '--bogus'],
    [['simulate', '--export-progress', 'bursty'], '--export-progress'],
    [['simulate', '--api-revision', '3'], '--api-revision'],
    [['simulate', '--public-url', 'http://static-export-simulator.docs.svc/api'], '--public-url'],
    [['simulate', '--public-url', 'static-export-simulator.docs.svc'], '--public-url'],
    [['simulate', '--key-file', '/nonexistent/admin-key'], '--key-file'],
    [['simulate', '--key', 'mint_a', '--key-file', '/nonexistent/admin-key'], '--key-file'],
    [['export', '--domain', 'docs.example.com', '--expected-duration', '2 minutes'], '--expected-duration'],
  ])('exits 2 naming the flag for %j', async (args, flag) => {
    expectUsage(await runCli(args, api), flag);
  });

  it('with --json, a usage error is a JSON line on stdout too (exit 2)', async () => {
    const r = await runCli(['export', '--domain', 'd.example.com', '--json', '--poll-interval', 'soon'], api);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      event: 'error',
      exitCode: 2,
      message: expect.stringContaining("option '--poll-interval <duration>' argument 'soon' is invalid"),
    });
    expect(r.stderr).not.toContain('add --help');
  });

  it('takes its log level from STATIC_EXPORT_LOG_LEVEL in any case; an unknown level exits 2; LOG_LEVEL warns', async () => {
    // One retry: the refused first attempt is logged at warn.
    const args = [
      'fetch',
      '--dest',
      join(work, 'never'),
      '--url',
      'http://127.0.0.1:1/b.tar.gz',
      '--retries',
      '1',
    ];
    const loud = await runCli(args, { STATIC_EXPORT_LOG_LEVEL: 'loud' });
    expect(loud.code).toBe(2);
    expect(loud.stderr).toContain(
      'STATIC_EXPORT_LOG_LEVEL=loud is not a log level: use one of trace, debug, info, warn',
    );
    const retried = /"level":40.*bundle download interrupted/;
    expect((await runCli(args, { STATIC_EXPORT_LOG_LEVEL: 'WARN' })).stderr).toMatch(retried);
    expect((await runCli(args, { STATIC_EXPORT_LOG_LEVEL: 'Error' })).stderr).not.toMatch(retried);
    const legacy = await runCli(args, { LOG_LEVEL: 'warn' });
    expect(legacy.stderr).toContain(
      'warning: LOG_LEVEL is deprecated and will be ignored in the next minor version: set STATIC_EXPORT_LOG_LEVEL',
    );
    expect(legacy.stderr).toMatch(retried);
  });

  describe("duration flags, in the CRDs' syntax", () => {
    it.each([
      [['export', '--domain', 'd.example.com', '--timeout', '2 minutes'], '--timeout'],
      [['agent', 'create', '--project', 'p', '--prompt', 'x', '--poll-interval', '1.5s'], '--poll-interval'],
      [['simulate', '--link-ttl', '15min'], '--link-ttl'],
      [['operator', '--lease-duration', 'soon'], '--lease-duration'],
      [['fetch', '--dest', 'd', '--timeout', '-1s'], '--timeout'],
    ])('refuse %j naming the flag and the accepted form (exit 2)', async (args, flag) => {
      const r = await runCli(args, api);
      expectUsage(r, flag);
      expect(r.stderr).toContain('expected a duration such as 500ms, 10s, 2m30s or 24h (units h, m, s, ms).');
    });

    it('refuse a value below the least one, saying which', async () => {
      const r = await runCli(['export', '--domain', 'd.example.com', '--poll-interval', '10ms'], api);
      expectUsage(r, '--poll-interval');
      expect(r.stderr).toContain('expected at least 100ms.');
    });

    it('still take a number in the old unit, with a warning that names the new spelling', async () => {
      const r = await runCli(
        ['export', '--domain', 'docs.example.com', '--poll-interval', '100', '--timeout', '60'],
        api,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        'warning: --poll-interval 100 is read as milliseconds; a number without a unit is deprecated and will be refused in the next minor version: write --poll-interval 100ms',
      );
      expect(r.stderr).toContain('warning: --timeout 60 is read as seconds;');
      expect(r.stderr).toContain('write --timeout 1m');
    });

    it('show their defaults as durations in --help', async () => {
      const r = await runCli(['export', '--help']);
      const help = r.stdout.replace(/\s+/g, ' ');
      expect(help).toContain('--timeout <duration> give up waiting for the export job after this long');
      expect(help).toContain(
        '--download-timeout <duration> give up on the bundle download after this long in all, retries included (default: 30m)',
      );
    });
  });

  it('exits 6 when the export outlasts --timeout', async () => {
    sim.configure({ exportDurationMs: 60_000 });
    try {
      const result = await runCli(
        ['export', '--domain', 'docs.example.com', '--timeout', '1s', '--poll-interval', '200ms'],
        api,
      );
      expect(result.code).toBe(6);
      expect(result.stderr).toContain('--timeout');
    } finally {
      sim.configure({ exportDurationMs: 300 });
    }
  });

  it('without --poll-interval polls by progress: a first look, then at the end progress points to', async () => {
    sim.configure({ exportDurationMs: 3_000 });
    try {
      const from = sim.requests.length;
      const result = await runCli(['export', '--domain', 'docs.example.com', '--json'], api);
      expect(result.code, result.stderr).toBe(0);
      const calls = sim.requests.slice(from);
      const start = calls.find((r) => r.endpoint === 'start')?.time ?? 0;
      const polls = calls.filter((r) => r.endpoint === 'status').map((r) => r.time - start);
      // A fixed 100 ms interval would make about 30; the schedule: 1 s, then the end the progress
      // seen then points to (4 s: measured from the start, the simulator's queued tenth counts).
      expect(polls.length).toBeLessThanOrEqual(3);
      expect(polls[0]).toBeGreaterThanOrEqual(900);
      // The end is seen within a second and a half of the export's 3 s.
      expect(polls.at(-1)).toBeGreaterThanOrEqual(3_000);
      expect(polls.at(-1)).toBeLessThan(4_500);
    } finally {
      sim.configure({ exportDurationMs: 300 });
    }
  });

  it('with --expected-duration first looks when the export should be done, and prints how long it took', async () => {
    sim.configure({ exportDurationMs: 3_000 });
    try {
      const from = sim.requests.length;
      const result = await runCli(
        ['export', '--domain', 'docs.example.com', '--expected-duration', '3s'],
        api,
      );
      expect(result.code, result.stderr).toBe(0);
      const calls = sim.requests.slice(from);
      const start = calls.find((r) => r.endpoint === 'start')?.time ?? 0;
      const polls = calls.filter((r) => r.endpoint === 'status').map((r) => r.time - start);
      expect(polls[0]).toBeGreaterThanOrEqual(2_900);
      expect(polls.length).toBeLessThanOrEqual(2);
      // The platform's own timestamps: what to pass as --expected-duration next time.
      expect(result.stderr).toMatch(/completed in 3s/);
    } finally {
      sim.configure({ exportDurationMs: 300 });
    }
  });

  it('exits 6 at --timeout also when the schedule would wait longer, after a last look at the deadline', async () => {
    sim.configure({ exportDurationMs: 60_000 });
    try {
      const from = sim.requests.length;
      const result = await runCli(['export', '--domain', 'docs.example.com', '--timeout', '2s'], api);
      expect(result.code).toBe(6);
      expect(result.stderr).toContain('--timeout');
      const calls = sim.requests.slice(from);
      const start = calls.find((r) => r.endpoint === 'start')?.time ?? 0;
      const last = calls.filter((r) => r.endpoint === 'status').at(-1)?.time ?? 0;
      expect(last - start).toBeGreaterThanOrEqual(1_900);
    } finally {
      sim.configure({ exportDurationMs: 300 });
    }
  });

  it('exits 2 before starting an export when --values-out is a directory, and leaves no file holding the link', async () => {
    const dir = join(work, 'values-dir');
    await mkdir(dir);
    const starts = sim.requests.length;
    const result = await runCli(['export', '--domain', 'docs.example.com', '--values-out', dir], api);
    expectUsage(result, '--values-out');
    expect(result.stderr).toContain('is a directory');
    expect(sim.requests.length).toBe(starts);
    expect((await readdir(work)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expectNoSecrets(result.stdout + result.stderr);
  });

  it('exits 2 before starting an export when the directory of --values-out is missing', async () => {
    const starts = sim.requests.length;
    const result = await runCli(
      ['export', '--domain', 'docs.example.com', '--values-out', join(work, 'nowhere', 'values.yaml')],
      api,
    );
    expectUsage(result, '--values-out');
    expect(result.stderr).toContain('does not exist');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(sim.requests.length).toBe(starts);
  });

  it.each([
    ['no key at all', {}],
    ['an empty STATIC_EXPORT_API_KEY', { STATIC_EXPORT_API_KEY: '' }],
  ])('exits 3 with %s', async (_, env: Record<string, string>) => {
    const result = await runCli(['export', '--domain', 'docs.example.com'], {
      STATIC_EXPORT_API_URL: sim.baseUrl,
      ...env,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('STATIC_EXPORT_API_KEY');
  });

  it('exits 3 with an empty --key-file', async () => {
    const keyFile = join(work, 'empty.key');
    await writeFile(keyFile, '');
    const result = await runCli(['export', '--domain', 'docs.example.com', '--key-file', keyFile], {
      STATIC_EXPORT_API_URL: sim.baseUrl,
    });
    expect(result.code).toBe(3);
  });

  it('exits 2 naming --api-url for a URL that does not parse (port out of range)', async () => {
    const result = await runCli(
      ['export', '--domain', 'docs.example.com', '--api-url', 'http://h:99999'],
      api,
    );
    expectUsage(result, '--api-url');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 for the published base URL ending in /v1, naming the URL to use, before any request', async () => {
    const before = sim.requests.length;
    for (const env of [{ ...api, STATIC_EXPORT_API_URL: `${sim.baseUrl}/v1` }, api]) {
      const args = ['export', '--domain', 'docs.example.com'];
      const result = await runCli(env === api ? [...args, '--api-url', `${sim.baseUrl}/v1/`] : args, env);
      expectUsage(
        result,
        '--api-url must not end in /v1: the client adds /v1/... (and /v2/agent/...) itself',
      );
      expect(result.stderr).toContain('e.g. https://api.mintlify.com');
    }
    expect(sim.requests.length).toBe(before);
  });

  it('exits 2 naming --api-url when no API URL is configured', async () => {
    const result = await runCli(['export', '--domain', 'docs.example.com'], {
      STATIC_EXPORT_API_KEY: sim.adminKey,
    });
    expectUsage(result, '--api-url');
    expect(result.stderr).toContain('STATIC_EXPORT_API_URL');
  });
});

describe('the site check of export and fetch', () => {
  afterEach(() => sim.configure({ faults: [] }));
  const exportArgs = (out: string, valuesOut: string) => [
    'export',
    '--domain',
    'docs.example.com',
    '--out',
    out,
    '--values-out',
    valuesOut,
    '--poll-interval',
    '100ms',
  ];

  it('export exits 5 on an empty site (directories only), leaving --out and the values file as they were', async () => {
    const out = join(work, 'gated-site');
    const valuesFile = join(work, 'gated-values.yaml');
    const good = await runCli(exportArgs(out, valuesFile), api);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stderr).toContain('8 pages');
    const before = { site: await contentVersion(out), values: await readFile(valuesFile, 'utf8') };

    sim.configure({ faults: ['start:empty:1:1'] });
    const bad = await runCli(exportArgs(out, valuesFile), api);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain(
      'the site in the bundle was refused: it has no index.html at its root; it has 0 pages, fewer than the minimum of 1',
    );
    expect(bad.stderr).toContain(`${out} was left as it was`);
    expect(await contentVersion(out)).toEqual(before.site);
    expect(await readFile(valuesFile, 'utf8')).toBe(before.values);
    expect((await readdir(work)).filter((f) => f.startsWith('.gated-site'))).toEqual([]);
    expectNoSecrets(bad.stdout + bad.stderr);
  });

  it('fetch refuses a site without index.html unless --allow-missing-index, and checks --min-pages', async () => {
    sim.configure({ faults: ['start:noindex:1:1'] });
    const bundle = await exportBundle(sim);
    const env = { STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl };
    const dest = join(work, 'noindex');
    const refused = await runCli(['fetch', '--dest', dest], env);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('it has no index.html at its root');
    await expect(stat(dest)).rejects.toThrow(/ENOENT/);

    const tooFew = await runCli(['fetch', '--dest', dest, '--allow-missing-index', '--min-pages', '8'], env);
    expect(tooFew.code).toBe(5);
    expect(tooFew.stderr).toContain('it has 7 pages, fewer than the minimum of 8');

    const accepted = await runCli(['fetch', '--dest', dest, '--allow-missing-index', '--json'], env);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({ site: { pages: 7, hasIndex: false } });
  });

  it('fetch --max-page-drop compares with the site already in --dest', async () => {
    const dest = join(work, 'dropping');
    const full = await exportBundle(sim);
    expect((await runCli(['fetch', '--dest', dest], { STATIC_EXPORT_BUNDLE_URL: full.bundleUrl })).code).toBe(
      0,
    );
    const before = await contentVersion(dest);
    sim.configure({ faults: ['start:pages=2:1:1'] });
    const few = await exportBundle(sim);
    const env = { STATIC_EXPORT_BUNDLE_URL: few.bundleUrl };

    const refused = await runCli(['fetch', '--dest', dest, '--max-page-drop', '50%'], env);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('its page count dropped from 8 to 2 (75%, more than the allowed 50%)');
    expect(await contentVersion(dest)).toEqual(before);

    // 80 (a percentage without the %) allows the 75% drop.
    expect((await runCli(['fetch', '--dest', dest, '--max-page-drop', '80'], env)).code).toBe(0);
  });

  it('fetch --max-page-drop has no baseline when --dest is not a directory yet', async () => {
    const dest = join(work, 'was-a-file');
    await writeFile(dest, 'not a site');
    const bundle = await exportBundle(sim);
    // --force: without it a file that static-export did not write is never replaced.
    const result = await runCli(['fetch', '--dest', dest, '--force', '--max-page-drop', '50%'], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await stat(join(dest, 'index.html'))).isFile()).toBe(true);
  });

  it('exits 2 naming --max-page-drop and --min-pages for values that are not limits', async () => {
    const env = { STATIC_EXPORT_BUNDLE_URL: 'https://example.com/b.tar.gz' };
    expectUsage(
      await runCli(['fetch', '--dest', join(work, 'x'), '--max-page-drop', '150%'], env),
      '--max-page-drop',
    );
    expectUsage(await runCli(['fetch', '--dest', join(work, 'x'), '--min-pages', '-1'], env), '--min-pages');
  });
});

describe('static-export fetch and mirror', () => {
  it('fetches from STATIC_EXPORT_BUNDLE_URL and verifies the pinned version', async () => {
    const bundle = await exportBundle(sim);
    const first = await runCli(['fetch', '--dest', join(work, 'fetched'), '--json'], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(first.code, first.stderr).toBe(0);
    const fetched = JSON.parse(first.stdout) as { version: string };
    expectNoSecrets(first.stdout + first.stderr);

    const wrongPin = `sha256-${'0'.repeat(64)}`;
    const pinned = await runCli(['fetch', '--dest', join(work, 'fetched'), '--expect-version', wrongPin], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(pinned.code).toBe(5);
    expect(pinned.stderr).toContain(wrongPin);
    expect((await contentVersion(join(work, 'fetched'))).version).toBe(fetched.version);
  });

  it('resumes a dropped download and keeps the link out of debug logs', async () => {
    const bundle = await exportBundle(sim);
    sim.configure({ faults: ['download:truncate:1:1'] });
    try {
      const result = await runCli(['fetch', '--dest', join(work, 'resumed')], {
        STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
        STATIC_EXPORT_LOG_LEVEL: 'debug',
      });
      expect(result.code, result.stderr).toBe(0);
      // The retry was logged (pino JSON on stderr), with the link reduced to origin and path.
      expect(result.stderr).toContain('bundle download interrupted');
      expectNoSecrets(result.stdout + result.stderr);
    } finally {
      sim.configure({ faults: [] });
    }
  });

  it('exits 5 on an expired link without printing it', async () => {
    const bundle = await exportBundle(sim);
    const expired = sim.signBundleUrl(bundle.jobId, sim.now() - 1000);
    const result = await runCli(['fetch', '--dest', join(work, 'never'), '--url', expired]);
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('expired');
    expectNoSecrets(result.stdout + result.stderr);
  });

  it.each([
    [
      'a stray argument',
      ['fetch', 'http://127.0.0.1:1/b.tar.gz?expires=1&sig=abc123', '--dest', 'd'],
      'too many arguments',
    ],
    ['an unknown option', ['fetch', '--dest', 'd', '--link=127.0.0.1:1/b.tar.gz?sig=abc123'], '--link'],
    [
      'a bad option value',
      ['fetch', '--dest', 'd', '--expect-version', 'https://h.example/b?sig=abc123'],
      '--expect-version',
    ],
  ])('exits 2 on %s without printing the link', async (_, args, shown) => {
    const result = await runCli(args);
    expectUsage(result, shown);
    expectNoSecrets(result.stdout + result.stderr);
    expect(result.stderr).not.toContain('abc123');
  });

  it('exits 2 naming --url for a link that does not parse (port out of range), without printing it', async () => {
    const result = await runCli([
      'fetch',
      '--dest',
      join(work, 'x'),
      '--url',
      'http://h:99999/b.tar.gz?sig=abc123',
    ]);
    expectUsage(result, '--url');
    expect(result.stderr).not.toContain('abc123');
  });

  it('exits 2 naming --url when no link is given', async () => {
    expectUsage(await runCli(['fetch', '--dest', join(work, 'x')]), '--url');
  });

  it('mirrors a bundle', async () => {
    const bundle = await exportBundle(sim);
    const result = await runCli(
      ['mirror', '--dir', join(work, 'mirror'), '--domain', 'docs.example.com', '--json'],
      {
        STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const { version } = JSON.parse(result.stdout) as { version: string };
    const index = JSON.parse(await readFile(join(work, 'mirror/docs.example.com/index.json'), 'utf8'));
    expect(index.latest).toBe(version);
    expectNoSecrets(result.stdout + result.stderr);
  });
});

describe.each(['matrix', 'path'] as const)('a link with its signature in the %s', (linkStyle) => {
  let styled: Simulator;
  beforeAll(async () => {
    styled = await startSimulator({ exportDurationMs: 50, linkStyle });
  });
  afterAll(() => styled.close());

  /** What of the link is secret: its signature and its expiry, wherever the style put them. */
  function expectLinkHidden(link: string, output: string): void {
    // The expiry follows `expires=` or stands as its own segment; the job id may hold digits too.
    const secrets = [/[0-9a-f]{64}/.exec(link)?.[0], /(?:expires=|\/)(\d{10})(?:[;/]|$)/.exec(link)?.[1]];
    expect(secrets.every((x) => x !== undefined)).toBe(true);
    for (const s of secrets) expect(output).not.toContain(s as string);
    expect(output).not.toMatch(/;(sig|expires)=/);
  }

  it('fetch downloads it, and prints none of it when the link has expired or the download fails', async () => {
    const bundle = await exportBundle(styled);
    expect(bundle.bundleUrl).not.toContain('?');
    const ok = await runCli([
      'fetch',
      '--dest',
      join(work, `styled-${linkStyle}`),
      '--url',
      bundle.bundleUrl,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expectLinkHidden(bundle.bundleUrl, ok.stdout + ok.stderr);

    const expired = styled.signBundleUrl(bundle.jobId, styled.now() - 1000);
    const refused = await runCli(['fetch', '--dest', join(work, 'never'), '--url', expired]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('http://127.0.0.1:');
    expect(refused.stderr).toContain('/bundle.tar.gz answered 403: the link has expired');
    expectLinkHidden(expired, refused.stdout + refused.stderr);

    styled.configure({ faults: ['download:500:1'] });
    try {
      const failed = await runCli(['fetch', '--dest', join(work, 'never'), '--url', bundle.bundleUrl], {
        STATIC_EXPORT_LOG_LEVEL: 'debug',
      });
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toContain('/bundle.tar.gz');
      expectLinkHidden(bundle.bundleUrl, failed.stdout + failed.stderr);
    } finally {
      styled.configure({ faults: [] });
    }
  });

  it('export writes it only into the values file', async () => {
    const values = join(work, `values-${linkStyle}.yaml`);
    const r = await runCli(
      [
        'export',
        '--domain',
        'docs.example.com',
        '--out',
        join(work, `site-${linkStyle}`),
        '--values-out',
        values,
      ],
      {
        STATIC_EXPORT_API_URL: styled.baseUrl,
        STATIC_EXPORT_API_KEY: styled.adminKey,
        STATIC_EXPORT_LOG_LEVEL: 'debug',
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const link = (parse(await readFile(values, 'utf8')) as { staticExport: { bundleUrl: string } })
      .staticExport.bundleUrl;
    expectLinkHidden(link, r.stdout + r.stderr);
  });
});

describe('static-export agent', () => {
  it('creates a job, waits for its pull request, and gets it again', async () => {
    const created = await runCli(
      [
        'agent',
        'create',
        '--project',
        'docs',
        '--prompt',
        'Fix the typo',
        '--wait',
        '--poll-interval',
        '100ms',
      ],
      api,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/completed\nPull request: https:\/\/github\.com\//);
    const id = /Agent job (\S+):/.exec(created.stdout)?.[1] as string;
    const got = await runCli(['agent', 'get', '--project', 'docs', id, '--json'], api);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ event: 'job', job: { id, status: 'completed' } });
  });

  it('exits 2 for an unknown job and for an empty prompt', async () => {
    expect((await runCli(['agent', 'get', '--project', 'docs', 'job_nope'], api)).code).toBe(2);
    expectUsage(await runCli(['agent', 'create', '--project', 'docs', '--prompt', ' '], api), '--prompt');
  });
});

describe('static-export operator', () => {
  it.each([
    [['operator', '--api-requests-per-minute', '-1'], '--api-requests-per-minute'],
    [['operator', '--api-requests-per-minute', 'many'], '--api-requests-per-minute'],
    // A share of the organization's 10 starts an hour: never more than the whole hour.
    [['operator', '--start-budget-per-hour', '11'], '--start-budget-per-hour'],
    [['operator', '--start-budget-per-hour', '0'], '--start-budget-per-hour'],
    [['operator', '--lease-duration', '5s', '--renew-deadline', '5s'], '--renew-deadline'],
    // Keys never go over plain http to another host unless allowed explicitly.
    [['operator', '--api-base-url', 'http://api.example.com'], '--api-base-url'],
    [
      ['operator', '--allowed-api-base-urls', 'https://a.example.com,http://b.example.com'],
      '--allowed-api-base-urls',
    ],
    [['operator', '--allowed-api-base-urls', 'ftp://a.example.com'], '--allowed-api-base-urls'],
    // The platform's published server URL ends in /v1, which the client adds itself.
    [['operator', '--api-base-url', 'https://api.mintlify.com/v1'], '--api-base-url must not end in /v1'],
    [
      ['operator', '--allowed-api-base-urls', 'https://a.example.com,https://b.example.com/v1/'],
      '--allowed-api-base-urls must not end in /v1',
    ],
    // Git tokens likewise, loopback included; an SSH URL with a password, or no host.
    [['operator', '--allowed-git-urls', 'http://127.0.0.1:3000/acme/gitops.git'], '--allowed-git-urls'],
    [
      ['operator', '--allowed-git-urls', 'ssh://git:hunter2@github.com/acme/gitops.git'],
      '--allowed-git-urls',
    ],
    [['operator', '--allowed-git-urls', 'ftp://github.com/acme/gitops.git'], '--allowed-git-urls'],
  ])('exits 2 naming the flag for %j, before touching the cluster', async (args, flag) => {
    expectUsage(await runCli(args, {}), flag);
  });

  it('exits 2 for an --allowed-git-urls entry with credentials, without repeating them', async () => {
    const r = await runCli(
      ['operator', '--allowed-git-urls', 'https://bot:ghp_T0ken@github.com/acme/gitops.git'],
      {},
    );
    expectUsage(r, '--allowed-git-urls: an entry holds credentials');
    expect(r.stderr).not.toMatch(/bot|ghp_T0ken/);
    const ssh = await runCli(
      ['operator', '--allowed-git-urls', 'ssh://git:hunter2@github.com/acme/gitops.git'],
      {},
    );
    expectUsage(ssh, '--allowed-git-urls: an SSH entry');
    expect(ssh.stderr).not.toContain('hunter2');
  });
});

describe('static-export simulate', () => {
  it('prints its URL and key as JSON, serves the API, and stops on SIGTERM', async () => {
    const child = spawn(NODE, [MAIN, 'simulate', '--json', '--key', 'mint_simkey0123456789'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const { baseUrl, adminKey } = JSON.parse(line) as { baseUrl: string; adminKey: string };
    expect(adminKey).toBe('mint_simkey0123456789');
    const res = await fetch(`${baseUrl}/v2/agent/p/job/unknown`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(res.status).toBe(404);
    await res.arrayBuffer();
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it("serves the platform's current static export API by default (--api-revision 2), the contract's no longer", async () => {
    const child = spawn(NODE, [MAIN, 'simulate', '--export-duration', '0s'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      output += d;
    });
    await vi.waitFor(() => expect(output).toContain('Stop with Ctrl-C.'), { timeout: 15_000 });
    const baseUrl = /listening on (\S+)/.exec(output)?.[1] ?? '';
    const adminKey = /Admin key: (\S+)/.exec(output)?.[1] ?? '';
    // From a clone static-export is not on the PATH: the banner names npm's script, silent for --json.
    expect(output).toContain('  npm run -s cli -- export --project-id ');
    const headers = { authorization: `Bearer ${adminKey}` };
    const started = await fetch(`${baseUrl}/v1/static-export/6520f3a1c9b1a20012ab34ce/jobs`, {
      method: 'POST',
      headers,
    });
    expect(started.status).toBe(202);
    const { jobId } = (await started.json()) as { jobId: string };
    expect(jobId).toMatch(/^[0-9a-f]{24}$/);
    const contract = await fetch(`${baseUrl}/v1/static-export/jobs/${jobId}/bundle`, {
      method: 'POST',
      headers,
    });
    expect(contract.status).toBe(404);
    await contract.arrayBuffer();
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('limits admin requests per minute like the vendor when told to (--requests-per-minute)', async () => {
    const child = spawn(NODE, [MAIN, 'simulate', '--json', '--requests-per-minute', '1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const { baseUrl, adminKey } = JSON.parse(line) as { baseUrl: string; adminKey: string };
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${baseUrl}/v2/agent/p/job/unknown`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([404, 429]);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses a key file holding no admin key, naming the flag, the file and its own key rule, without printing its content (exit 2)', async () => {
    const keyFile = join(work, 'not-a-key');
    await writeFile(keyFile, 'dsc_public 0123456789\n');
    const r = await runCli(['simulate', '--key-file', keyFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--key-file ${keyFile}: not an admin key (it holds whitespace`);
    expect(r.stderr).not.toContain('dashboard settings');
    expect(r.stderr + r.stdout).not.toContain('dsc_public');
  });

  it("refuses --key notmint with the simulator's own key rule, not the platform dashboard's (exit 2)", async () => {
    const r = await runCli(['simulate', '--key', 'notmint']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error: --key: not an admin key: the simulator takes any key of the platform\'s admin key form: "mint_" and at ' +
        'least one more character, no whitespace, not a public assistant key ("mint_dsc_…"); give none to have one generated.\n',
    );
  });

  it('takes its key from --key-file without printing it, and signs bundle links for --public-url', async () => {
    const keyFile = join(work, 'simulator-key');
    await writeFile(keyFile, 'mint_fromsecret0123456789\n');
    const child = spawn(
      NODE,
      [
        MAIN,
        'simulate',
        '--api-revision',
        '1',
        '--json',
        '--export-duration',
        '0s',
        '--key-file',
        keyFile,
        '--public-url',
        'http://sim.docs.svc:8080/',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    expect(line).not.toContain('mint_fromsecret');
    const { baseUrl } = JSON.parse(line) as { baseUrl: string };
    const headers = { authorization: 'Bearer mint_fromsecret0123456789', 'content-type': 'application/json' };
    const started = await fetch(`${baseUrl}/v1/static-export/jobs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ domain: 'docs.example.com' }),
    });
    expect(started.status).toBeLessThan(300);
    const { jobId } = (await started.json()) as { jobId: string };
    let bundle: Response;
    do {
      bundle = await fetch(`${baseUrl}/v1/static-export/jobs/${jobId}/bundle`, { method: 'POST', headers });
    } while (bundle.status === 409 && (await bundle.arrayBuffer()));
    // The link names the address clients reach the simulator at, not the one it listens on.
    expect(((await bundle.json()) as { bundleUrl: string }).bundleUrl).toMatch(
      /^http:\/\/sim\.docs\.svc:8080\/bundles\/.+[?&]sig=/,
    );
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
