import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { call, completedExport, download, untar } from './helpers.ts';

/** Raw GET that reports how many body bytes arrived before the connection ended or broke. */
function rawGet(
  url: string,
): Promise<{ status: number; contentLength: number; received: number; broken: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let received = 0;
      let broken = false;
      res.on('data', (c: Buffer) => {
        received += c.length;
      });
      res.on('error', () => {
        broken = true;
      });
      res.on('close', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentLength: Number(res.headers['content-length']),
          received,
          broken: broken || !res.complete,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('bundle links', () => {
  let sim: Simulator;
  let link: { jobId: string; bundleUrl: string; sizeBytes: number; expiresAt: string };
  let full: Buffer;

  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 30, linkTtlSeconds: 60 });
    link = await completedExport(sim);
    full = (await download(link.bundleUrl)).body;
  });
  afterAll(() => sim.close());

  it('serves the whole archive with the advertised size', async () => {
    const res = await download(link.bundleUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.body.length).toBe(link.sizeBytes);
    expect(Number(res.headers.get('content-length'))).toBe(link.sizeBytes);
    expect(res.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  });

  it('answers HEAD with headers only', async () => {
    const res = await fetch(link.bundleUrl, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBe(link.sizeBytes);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('serves byte ranges (206) and refuses unsatisfiable ones (416)', async () => {
    const mid = await download(link.bundleUrl, { range: 'bytes=10-19' });
    expect(mid.status).toBe(206);
    expect(mid.headers.get('content-range')).toBe(`bytes 10-19/${full.length}`);
    expect(mid.body).toEqual(full.subarray(10, 20));

    const open = await download(link.bundleUrl, { range: 'bytes=100-' });
    expect(open.status).toBe(206);
    expect(open.body).toEqual(full.subarray(100));

    const suffix = await download(link.bundleUrl, { range: 'bytes=-7' });
    expect(suffix.status).toBe(206);
    expect(suffix.body).toEqual(full.subarray(full.length - 7));

    const beyond = await download(link.bundleUrl, { range: `bytes=${full.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${full.length}`);
  });

  it('ignores a Range whose If-Range no longer matches', async () => {
    const etag = (await fetch(link.bundleUrl, { method: 'HEAD' })).headers.get('etag') ?? '';
    const match = await download(link.bundleUrl, { range: 'bytes=0-9', 'if-range': etag });
    expect(match.status).toBe(206);
    const stale = await download(link.bundleUrl, { range: 'bytes=0-9', 'if-range': '"old"' });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(full.length);
  });

  it('refuses tampered links with 403', async () => {
    const url = new URL(link.bundleUrl);
    const sig = url.searchParams.get('sig') ?? '';
    const badSig = new URL(url);
    badSig.searchParams.set('sig', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const otherJob = new URL(url);
    otherJob.pathname = '/bundles/se_0000000000000000/bundle.tar.gz';
    const unsigned = new URL(url.origin + url.pathname);
    for (const bad of [badSig, longer, otherJob, unsigned]) {
      const res = await download(bad.toString());
      expect(res.status, bad.pathname).toBe(403);
    }
    expect((await download(badSig.toString())).body.toString()).toContain('SignatureDoesNotMatch');
  });

  it('refuses expired links with 403 while a fresh link for the same job works', async () => {
    const expired = sim.signBundleUrl(link.jobId, sim.now() - 1000);
    const res = await download(expired);
    expect(res.status).toBe(403);
    expect(res.body.toString()).toContain('Request has expired');

    const fresh = await call(sim, 'POST', `/v1/static-export/jobs/${link.jobId}/bundle`);
    expect(fresh.status).toBe(200);
    const again = await download(String(fresh.json.bundleUrl));
    expect(again.body).toEqual(full);
  });

  it('expires a link once the clock passes expiresAt', async () => {
    const own = await call(sim, 'POST', `/v1/static-export/jobs/${link.jobId}/bundle`);
    const url = String(own.json.bundleUrl);
    expect((await download(url)).status).toBe(200);
    sim.advanceTime(61_000);
    try {
      expect((await download(url)).status).toBe(403);
    } finally {
      sim.advanceTime(-61_000);
    }
  });
});

describe('download faults', () => {
  let sim: Simulator;
  let link: { bundleUrl: string; sizeBytes: number };

  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 10, padBytes: 256 * 1024 });
    link = await completedExport(sim);
  });
  afterAll(() => sim.close());

  it('truncate sends the full Content-Length, then drops the connection mid-body', async () => {
    sim.configure({ faults: ['download:truncate:1'] });
    const res = await rawGet(link.bundleUrl);
    sim.configure({ faults: [] });
    expect(res.status).toBe(200);
    expect(res.contentLength).toBe(link.sizeBytes);
    expect(res.broken).toBe(true);
    expect(res.received).toBeGreaterThan(0);
    expect(res.received).toBeLessThan(link.sizeBytes);
  });

  it('truncate also applies to ranged requests, which can resume it', async () => {
    sim.configure({ faults: ['download:truncate:1:1'] });
    const first = await rawGet(link.bundleUrl);
    expect(first.broken).toBe(true);
    const rest = await download(link.bundleUrl, { range: `bytes=${first.received}-` });
    sim.configure({ faults: [] });
    expect(rest.status).toBe(206);
    expect(first.received + rest.body.length).toBe(link.sizeBytes);
  });

  it('malformed keeps the length but corrupts bytes', async () => {
    const good = (await download(link.bundleUrl)).body;
    sim.configure({ faults: ['download:malformed:1'] });
    const bad = (await download(link.bundleUrl)).body;
    sim.configure({ faults: [] });
    expect(bad.length).toBe(good.length);
    expect(bad.equals(good)).toBe(false);
  });

  it('status and reset faults, limited by times', async () => {
    sim.configure({ faults: ['download:503:1:1'] });
    expect((await download(link.bundleUrl)).status).toBe(503);
    expect((await download(link.bundleUrl)).status).toBe(200);
    sim.configure({ faults: ['download:reset:1'] });
    await expect(download(link.bundleUrl)).rejects.toThrow();
    sim.configure({ faults: [] });
    const last = sim.requests.at(-1);
    expect(last?.status).toBe(0);
    expect(last?.faults).toEqual(['download:reset:1']);
  });

  it('delay holds the response back', async () => {
    sim.configure({ faults: ['download:delay=300:1'] });
    const t0 = performance.now();
    expect((await download(link.bundleUrl)).status).toBe(200);
    sim.configure({ faults: [] });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it('pads large bundles with incompressible files', async () => {
    expect(link.sizeBytes).toBeGreaterThan(256 * 1024);
    const files = await untar((await download(link.bundleUrl)).body);
    expect(files.get('assets/media/blob-000.bin')?.content.length).toBe(256 * 1024);
  });

  it('never records query strings (signatures) in the request log', () => {
    expect(sim.requests.length).toBeGreaterThan(0);
    for (const r of sim.requests) expect(r.path).not.toContain('sig=');
  });
});

describe('link origin', () => {
  it('uses publicBaseUrl for bundle links when given', async () => {
    const sim = await startSimulator({ exportDurationMs: 10, publicBaseUrl: 'http://sim.example:8080' });
    try {
      const link = await completedExport(sim);
      expect(link.bundleUrl).toMatch(
        /^http:\/\/sim\.example:8080\/bundles\/se_[0-9a-f]+\/bundle\.tar\.gz\?expires=\d+&sig=[0-9a-f]{64}$/,
      );
      const local = new URL(link.bundleUrl);
      expect((await download(`${sim.baseUrl}${local.pathname}${local.search}`)).status).toBe(200);
      expect((await call(sim, 'GET', '/v1/static-export/jobs/%E0%A4%A')).status).toBe(400);
    } finally {
      await sim.close();
    }
  });
});

describe.each([
  [
    'matrix',
    /^http:\/\/127\.0\.0\.1:\d+\/bundles\/se_[0-9a-f]+\/bundle\.tar\.gz;expires=\d+;sig=[0-9a-f]{64}$/,
  ],
  ['path', /^http:\/\/127\.0\.0\.1:\d+\/bundles\/se_[0-9a-f]+\/\d+\/[0-9a-f]{64}\/bundle\.tar\.gz$/],
] as const)('links with the signature in the %s', (linkStyle, shape) => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 30, linkStyle });
  });
  afterAll(() => sim.close());

  it('are signed there, serve the bundle, and refuse an altered signature or a past expiry', async () => {
    const link = await completedExport(sim);
    expect(link.bundleUrl).toMatch(shape);
    expect((await download(link.bundleUrl)).status).toBe(200);
    const sig = /[0-9a-f]{64}/.exec(link.bundleUrl)?.[0] ?? '';
    const forged = link.bundleUrl.replace(sig, `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
    expect((await download(forged)).status).toBe(403);
    expect((await download(sim.signBundleUrl(link.jobId, sim.now() - 1000))).status).toBe(403);
  });

  it('never records the signature or the expiry in the request log', () => {
    const downloads = sim.requests.filter((r) => r.endpoint === 'download');
    expect(downloads.length).toBe(3);
    for (const r of downloads) expect(r.path).toMatch(/^\/bundles\/se_[0-9a-f]+\/bundle\.tar\.gz$/);
  });
});
