// Answers a hostile or broken admin API sends, from a server written for the test on loopback:
// each is an InvalidResponseError with a short clean message (or a bounded, clamped value), never a
// RangeError or an unbounded id; and the CLI exits 9 for them, without a stack trace.
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminApiClient,
  AdminApiError,
  ExportStartLimitError,
  InvalidResponseError,
  ProjectNotFoundError,
  RateLimitedError,
  startMayHaveCreatedJob,
} from '../../../src/api/index.ts';
import { MAX_SERVER_DELAY_MS } from '../../../src/api/rate-limits.ts';
import { EXIT, exitCodeFor } from '../../../src/cli/exit-codes.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { runCli } from '../../support/tools/run-cli.ts';
import { json, stubServer } from './stub.ts';

const KEY = 'mint_hostiletest000000000';
const JOB = '6520f3a1c9b1a20012ab34cd';
const LINK = 'https://bucket.example/bundle.tar.gz?X-Amz-Signature=abc';

let answer: (res: ServerResponse) => void = (res) => json(res, 500, {});
let stub: Awaited<ReturnType<typeof stubServer>>;
let client: AdminApiClient;

beforeAll(async () => {
  stub = await stubServer((req, res) => {
    req.resume();
    answer(res);
  });
  client = new AdminApiClient({
    baseUrl: stub.baseUrl,
    apiKey: KEY,
    retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 50 },
  });
});
afterAll(async () => {
  await client.close();
  await stub.close();
});

/** The admin API error a call failed with (the test fails if it succeeded). */
const caught = (promise: Promise<unknown>) => rejectionOf(promise, AdminApiError);

const completed = (extra: Record<string, unknown>) => ({
  jobId: JOB,
  status: 'completed',
  createdAt: '2026-11-27T10:00:00Z',
  updatedAt: '2026-11-27T10:01:00Z',
  error: null,
  ...extra,
});

describe('hostile answers are invalid responses with bounds', () => {
  it('a 202 without a job id: invalid, and the start may have created a job', async () => {
    answer = (res) => json(res, 202, { status: 'queued' });
    const err = await caught(client.startExport({ projectId: 'acme' }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).field).toBe('jobId');
    expect(err.status).toBe(202);
    expect(startMayHaveCreatedJob(err)).toBe(true);
    expect(err.message).toMatch(/may have started all the same/);
    expect(exitCodeFor(err)).toBe(EXIT.invalidAnswer);
  });

  it('a job id of 900,000 characters, or with characters no id has, is refused and never quoted', async () => {
    for (const jobId of ['a'.repeat(900_000), 'x'.repeat(129), '../../etc', 'id with spaces', '\u001b[2J']) {
      answer = (res) => json(res, 202, { jobId, status: 'queued' });
      const err = await caught(client.startExport({ projectId: 'acme' }));
      expect(err, jobId.slice(0, 20)).toBeInstanceOf(InvalidResponseError);
      expect((err as InvalidResponseError).field).toBe('jobId');
      expect(err.message.length).toBeLessThan(800);
      expect(err.message).not.toContain(jobId);
    }
    // The longest id accepted: 128 characters.
    answer = (res) => json(res, 202, { jobId: 'x'.repeat(128), status: 'queued' });
    expect((await client.startExport({ projectId: 'acme' })).jobId).toHaveLength(128);
  });

  it('an answer over 1 MiB is refused as soon as it is', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jobId":"${JOB}","status":"running","pad":"${'x'.repeat(2 << 20)}"}`);
    };
    const err = await caught(client.getExport({ revision: 'current', projectId: 'acme', jobId: JOB }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).field).toBe('(body)');
    expect(err.message).toMatch(/more than 1048576 bytes/);
  });

  it('a completed job without a link, and an expiresAt of 1e300', async () => {
    answer = (res) => json(res, 200, completed({}));
    const noLink = await caught(client.exportLink({ revision: 'current', projectId: 'acme', jobId: JOB }));
    expect(noLink).toBeInstanceOf(InvalidResponseError);
    expect((noLink as InvalidResponseError).field).toBe('bundleUrl');
    expect(exitCodeFor(noLink)).toBe(EXIT.invalidAnswer);

    for (const expiresAt of [1e300, -1, '+275760-09-13T00:00:00Z', '1969-12-31T23:59:59Z']) {
      answer = (res) => json(res, 200, completed({ bundleUrl: LINK, sizeBytes: 5, expiresAt }));
      const err = await caught(client.exportLink({ revision: 'current', projectId: 'acme', jobId: JOB }));
      expect(err, String(expiresAt)).toBeInstanceOf(InvalidResponseError);
      expect((err as InvalidResponseError).field).toBe('expiresAt');
      expect(err.message).toMatch(/between the years 2000 and 9999/);
    }
  });

  it('a failure text or status of any length is cut or refused, not carried on', async () => {
    answer = (res) => json(res, 200, { jobId: JOB, status: 'failed', error: 'e'.repeat(100_000) });
    const failed = await client.getExport({ revision: 'current', projectId: 'acme', jobId: JOB });
    expect(failed.error).toHaveLength(1000);
    answer = (res) => json(res, 200, { jobId: JOB, status: 's'.repeat(100_000) });
    expect(
      await caught(client.getExport({ revision: 'current', projectId: 'acme', jobId: JOB })),
    ).toBeInstanceOf(InvalidResponseError);
    answer = (res) => json(res, 500, { error: `${'e'.repeat(100_000)}` });
    const server = await caught(client.getExport({ revision: 'current', projectId: 'acme', jobId: JOB }));
    expect(server.message.length).toBeLessThan(500);
  });
});

describe('answers without a body', () => {
  it('a 400 without a body, on a start of either revision, says no reason was given and what to check', async () => {
    answer = (res) => {
      res.writeHead(400, { 'content-length': 0 });
      res.end();
    };
    const byDomain = await caught(client.startExport({ domain: 'docs.acme.dev' }));
    expect(byDomain.message).toBe(
      'The admin API rejected startExport of docs.acme.dev as invalid (400), without saying why. Check that the ' +
        'domain is the bare host of the docs site (no scheme, path or port) and that each path is a page of it.',
    );
    const byProject = await caught(client.startExport({ projectId: 'acme' }));
    expect(byProject.message).toMatch(
      /^The admin API rejected startExport of project acme as invalid \(400\), without saying why\./,
    );
    expect(exitCodeFor(byProject)).toBe(EXIT.usage);
  });

  it('a 404 without a body, or with a page that is not JSON, on a start of the current revision: an unknown project', async () => {
    for (const body of ['', '<html><body>Not Found</body></html>']) {
      answer = (res) => {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end(body);
      };
      const err = await caught(client.startExport({ projectId: 'acme' }));
      expect(err, body).toBeInstanceOf(ProjectNotFoundError);
    }
  });
});

describe('timestamps and delays from the server', () => {
  const zone = process.env.TZ;
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('reads an expiresAt without a zone as UTC, under New York time too', async () => {
    process.env.TZ = 'America/New_York';
    // The zone is in effect: a local reading would be five hours later.
    expect(new Date('2030-01-01T00:00:00').toISOString()).toBe('2030-01-01T05:00:00.000Z');
    for (const expiresAt of ['2030-01-01T00:00:00', '2030-01-01 00:00:00', '2030-01-01T00:00:00.000']) {
      answer = (res) => json(res, 200, completed({ bundleUrl: LINK, sizeBytes: 5, expiresAt }));
      const link = await client.exportLink({ revision: 'current', projectId: 'acme', jobId: JOB });
      expect(link.expiresAt.toISOString(), expiresAt).toBe('2030-01-01T00:00:00.000Z');
    }
    // A zone given is kept.
    answer = (res) =>
      json(res, 200, completed({ bundleUrl: LINK, sizeBytes: 5, expiresAt: '2030-01-01T00:00:00-05:00' }));
    expect(
      (
        await client.exportLink({ revision: 'current', projectId: 'acme', jobId: JOB })
      ).expiresAt.toISOString(),
    ).toBe('2030-01-01T05:00:00.000Z');
  });

  it('clamps a Retry-After of 99999999999999 s to a day, on a start and on a read', async () => {
    answer = (res) => {
      res.setHeader('retry-after', '99999999999999');
      json(res, 429, { error: 'Rate limit exceeded. At most 10 job starts per organization per hour.' });
    };
    const start = await caught(client.startExport({ projectId: 'acme' }));
    expect(start).toBeInstanceOf(ExportStartLimitError);
    expect((start as ExportStartLimitError).retryAfterMs).toBe(MAX_SERVER_DELAY_MS);
    expect(start.message).toMatch(/the next start is possible in 86400 s \(at \d{4}-/);
    const read = await caught(client.getExport({ revision: 'current', projectId: 'acme', jobId: JOB }));
    expect(read).toBeInstanceOf(RateLimitedError);
    expect((read as RateLimitedError).retryAfterMs).toBe(MAX_SERVER_DELAY_MS);
  });
});

describe('the CLI on hostile answers', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'hostile-cli-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  it.each([
    ['a 202 without a job id', () => (res: ServerResponse) => json(res, 202, { status: 'queued' })],
    [
      'a job id of 900,000 characters',
      () => (res: ServerResponse) => json(res, 202, { jobId: 'a'.repeat(900_000) }),
    ],
    [
      'a Retry-After of 99999999999999 s',
      () => (res: ServerResponse) => {
        res.setHeader('retry-after', '99999999999999');
        json(res, 429, { error: 'Rate limit exceeded. At most 10 job starts per organization per hour.' });
      },
    ],
  ])('%s: a clean message and its own exit code, no stack trace', { timeout: 30_000 }, async (name, make) => {
    answer = make();
    const result = await runCli(['export', '--project-id', 'acme', '--out', join(work, 'site')], {
      STATIC_EXPORT_API_URL: stub.baseUrl,
      STATIC_EXPORT_API_KEY: KEY,
    });
    expect(result.code, result.stderr).toBe(
      name.includes('Retry-After') ? EXIT.startLimit : EXIT.invalidAnswer,
    );
    expect(result.stderr).not.toMatch(/RangeError|\n\s+at /);
    expect(result.stderr.length).toBeLessThan(2000);
  });
});
