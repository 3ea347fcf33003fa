// Response shapes the simulator never produces: what the contract leaves open must be tolerated,
// and what the client cannot work without must fail as InvalidResponse naming the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminApiClient,
  InvalidResponseError,
  isExportFinished,
  RateLimitedError,
} from '../../../src/api/index.ts';
import { json, stubServer } from './stub.ts';

let reply: { status: number; body: unknown; headers?: Record<string, string> } = { status: 200, body: {} };
let lastPath = '';
let stub: Awaited<ReturnType<typeof stubServer>>;
let client: AdminApiClient;

beforeAll(async () => {
  stub = await stubServer((req, res) => {
    lastPath = req.url ?? '';
    if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
    json(res, reply.status, reply.body);
  });
  client = new AdminApiClient({
    baseUrl: `${stub.baseUrl}/api/`,
    apiKey: 'mint_stubkey0000000000',
    retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 50 },
  });
});
afterAll(async () => {
  await client.close();
  await stub.close();
});

describe('tolerated responses', () => {
  it('keeps unknown fields and unknown statuses, which count as not finished', async () => {
    reply = { status: 200, body: { status: 'exporting', progress: '42', pageCount: 'n/a', eta: 12 } };
    const job = await client.getExport({ revision: 'contract', jobId: 'se_1' });
    expect(job).toMatchObject({ jobId: 'se_1', status: 'exporting', progress: 42, eta: 12 });
    expect(job.pageCount).toBeUndefined();
    expect(isExportFinished(job)).toBe(false);
  });

  it('accepts a start response with only a jobId, and minimal agent jobs', async () => {
    reply = { status: 202, body: { jobId: 'se_2' } };
    expect(await client.startExport({ domain: 'docs.acme.dev' })).toEqual({ jobId: 'se_2' });
    reply = { status: 201, body: { id: 'a1', status: 'queued-by-new-server' } };
    expect(await client.createAgentJob('p', 'x')).toEqual({ id: 'a1', status: 'queued-by-new-server' });
  });

  it('accepts expiresAt as epoch seconds and keeps extra bundle fields', async () => {
    reply = {
      status: 200,
      body: { bundleUrl: 'https://s3.example/b.tar.gz?X-Sig=1', expiresAt: 1_900_000_000, md5: 'x' },
    };
    const bundle = await client.generateBundle('se_3');
    expect(bundle.expiresAt.toISOString()).toBe(new Date(1_900_000_000_000).toISOString());
    expect(bundle).toMatchObject({ jobId: 'se_3', md5: 'x' });
  });

  it('uses a base URL path prefix', async () => {
    reply = { status: 200, body: { status: 'completed' } };
    await client.getExport({ revision: 'contract', jobId: 'se_4' });
    expect(lastPath).toBe('/api/v1/static-export/jobs/se_4');
  });

  it('reads an HTTP-date Retry-After', async () => {
    reply = {
      status: 429,
      body: { error: 'slow down' },
      headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() },
    };
    const err = await client.getExport({ revision: 'contract', jobId: 'se_5' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(3_500_000);
  });
});

describe('unusable responses name the field', () => {
  it.each([
    [
      'getExport without status',
      () => client.getExport({ revision: 'contract', jobId: 'se_6' }),
      { jobId: 'se_6' },
      'status',
    ],
    [
      'startExport without jobId',
      () => client.startExport({ domain: 'd.example' }),
      { status: 'queued' },
      'jobId',
    ],
    [
      'bundle with a non-URL',
      () => client.generateBundle('se_7'),
      { bundleUrl: 5, expiresAt: '2030-01-01T00:00:00Z' },
      'bundleUrl',
    ],
    [
      'bundle with a bad expiry',
      () => client.generateBundle('se_8'),
      { bundleUrl: 'https://x.example/b', expiresAt: 'soon' },
      'expiresAt',
    ],
    ['agent job without id', () => client.getAgentJob('p', 'a'), { status: 'active' }, 'id'],
    ['an array body', () => client.getAgentJob('p', 'a'), [1, 2], '(body)'],
  ])('%s', async (_name, op, body, field) => {
    reply = { status: 200, body };
    const err = await op().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).field).toBe(field);
    expect((err as Error).message).toContain(`"${field}"`);
  });
});
