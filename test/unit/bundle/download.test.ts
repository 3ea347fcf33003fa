import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DownloadOptions, openDownload } from '../../../src/bundle/download.ts';
import { BundleError } from '../../../src/bundle/errors.ts';
import { fetchBundle } from '../../../src/bundle/fetch.ts';
import { contentVersion } from '../../../src/bundle/version.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { type ExportedBundle, exportBundle, generateLink } from '../../support/servers/sim-export.ts';
import { serveDrip } from './serve.ts';

let sim: Simulator;
let bundle: ExportedBundle;
let archive: Buffer;
let work: string;

const fast: Pick<DownloadOptions, 'backoffMs' | 'retries'> = { backoffMs: 1, retries: 3 };

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 0 });
  bundle = await exportBundle(sim);
  archive = Buffer.from(await (await fetch(bundle.bundleUrl)).arrayBuffer());
});
afterAll(() => sim.close());
beforeEach(async () => {
  sim.configure({ faults: [] });
  // Some tests move the simulator clock past expiresAt: every test starts from a fresh link.
  bundle = await generateLink(sim, bundle.jobId);
  work = await mkdtemp(join(tmpdir(), 'download-test-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const downloads = () => sim.requests.filter((r) => r.endpoint === 'download');

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function failure(promise: Promise<unknown>): Promise<BundleError> {
  const error = await rejectionOf(promise, BundleError);
  // Whatever went wrong, the link's signature never shows up in the message.
  expect(error.message).not.toMatch(/sig=|expires=/);
  return error;
}

describe('openDownload', () => {
  it('streams the archive and reports its digest and size', async () => {
    expect(archive.length).toBe(bundle.sizeBytes);
    const { body, done } = openDownload({ url: bundle.bundleUrl, expectedSize: bundle.sizeBytes });
    const bytes = await readAll(body);
    expect(bytes.equals(archive)).toBe(true);
    expect(await done).toEqual({
      sha256: sha256(archive),
      sizeBytes: archive.length,
      attempts: 1,
      renewals: 0,
    });
  });

  it('skips the digest when asked, still checking the size', async () => {
    const { body, done } = openDownload({
      url: bundle.bundleUrl,
      expectedSize: bundle.sizeBytes,
      digest: false,
    });
    expect((await readAll(body)).equals(archive)).toBe(true);
    expect(await done).toEqual({ sha256: undefined, sizeBytes: archive.length, attempts: 1, renewals: 0 });
    const short = openDownload({ url: bundle.bundleUrl, expectedSize: bundle.sizeBytes + 1, digest: false });
    await expect(readAll(short.body)).rejects.toMatchObject({ reason: 'SizeMismatch' });
  });

  it('resumes with Range after dropped connections', async () => {
    sim.configure({ faults: ['download:truncate:1:2'] });
    const before = downloads().length;
    const { body, done } = openDownload({ url: bundle.bundleUrl, expectedSize: bundle.sizeBytes, ...fast });
    expect((await readAll(body)).equals(archive)).toBe(true);
    const result = await done;
    expect(result.sha256).toBe(sha256(archive));
    expect(result.attempts).toBe(3);
    // Two truncated answers, then a 206 carrying the rest.
    expect(
      downloads()
        .slice(before)
        .map((r) => r.status),
    ).toEqual([200, 206, 206]);
  });

  it('asks for a fresh link when the link expires mid-download', async () => {
    sim.configure({ faults: ['download:truncate:1:1'] });
    let renewed = 0;
    let advanced = false;
    const { body, done } = openDownload({
      url: bundle.bundleUrl,
      expectedSize: bundle.sizeBytes,
      ...fast,
      renewUrl: async () => {
        renewed += 1;
        return (await generateLink(sim, bundle.jobId)).bundleUrl;
      },
      // Once bytes flow, move the simulator clock past expiresAt: the resume request meets a 403.
      onProgress: () => {
        if (!advanced) sim.advanceTime(3_600_000);
        advanced = true;
      },
    });
    const bytes = await readAll(body);
    expect(bytes.equals(archive)).toBe(true);
    expect(renewed).toBe(1);
    expect(await done).toMatchObject({ renewals: 1, sha256: sha256(archive) });
    expect(
      downloads()
        .slice(-3)
        .map((r) => r.status),
    ).toEqual([200, 403, 206]);
  });

  it('fails with Expired on 403 when no renewUrl is given', async () => {
    const expired = sim.signBundleUrl(bundle.jobId, sim.now() - 60_000);
    const { body, done } = openDownload({ url: expired, ...fast });
    const error = await failure(readAll(body));
    expect(error.reason).toBe('Expired');
    expect(error.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/…\/bundle\.tar\.gz answered 403/);
    await expect(done).rejects.toBe(error);
  });

  it('fails with SizeMismatch before downloading when the server disagrees with sizeBytes', async () => {
    const { body } = openDownload({ url: bundle.bundleUrl, expectedSize: bundle.sizeBytes + 1, ...fast });
    const error = await failure(readAll(body));
    expect(error.reason).toBe('SizeMismatch');
  });

  it('fails with DigestMismatch when corrupted bytes arrive', async () => {
    sim.configure({ faults: ['download:malformed:1'] });
    const { body } = openDownload({ url: bundle.bundleUrl, expectSha256: sha256(archive), ...fast });
    expect((await failure(readAll(body))).reason).toBe('DigestMismatch');
  });

  it('gives up with Network after the bounded retries', async () => {
    sim.configure({ faults: ['download:reset:1'] });
    const before = downloads().length;
    const { body } = openDownload({ url: bundle.bundleUrl, backoffMs: 1, retries: 2 });
    const error = await failure(readAll(body));
    expect(error.reason).toBe('Network');
    expect(downloads().length - before).toBe(3);
  });

  it('fails with HttpStatus on 404 without retrying', async () => {
    const url = new URL(bundle.bundleUrl);
    url.pathname = '/nothing-here/bundle.tar.gz';
    const { body } = openDownload({ url: url.toString(), ...fast });
    expect((await failure(readAll(body))).reason).toBe('HttpStatus');
  });
});

describe('fetchBundle', () => {
  it('downloads, verifies and extracts into dest', async () => {
    const dest = join(work, 'site');
    const result = await fetchBundle({ url: bundle.bundleUrl, dest, expectedSize: bundle.sizeBytes });
    expect(result).toMatchObject({ sha256: sha256(archive), sizeBytes: archive.length, path: dest });
    expect(result.version).toBe((await contentVersion(dest)).version);
    expect(result.files).toBeGreaterThan(3);
    expect(await readFile(join(dest, 'index.html'), 'utf8')).toContain('<html');
  });

  it('gives the same version for a re-export of unchanged content (byte-different archive)', async () => {
    const again = await exportBundle(sim);
    const second = Buffer.from(await (await fetch(again.bundleUrl)).arrayBuffer());
    expect(second.equals(archive)).toBe(false);
    const a = await fetchBundle({ url: bundle.bundleUrl, dest: join(work, 'a') });
    const b = await fetchBundle({ url: again.bundleUrl, dest: join(work, 'b') });
    expect(a.sha256).not.toBe(b.sha256);
    expect(a.version).toBe(b.version);
  });

  it('resumes after the truncate fault and still extracts everything', async () => {
    sim.configure({ faults: ['download:truncate:1:1'] });
    const dest = join(work, 'site');
    const result = await fetchBundle({ url: bundle.bundleUrl, dest, download: fast });
    expect(result.sha256).toBe(sha256(archive));
    expect(result.version).toBe((await contentVersion(dest)).version);
  });

  it('leaves dest untouched when the content is corrupted in transit', async () => {
    const dest = join(work, 'site');
    const good = await fetchBundle({ url: bundle.bundleUrl, dest });
    sim.configure({ faults: ['download:malformed:1'] });
    const error = await failure(fetchBundle({ url: bundle.bundleUrl, dest, download: fast }));
    expect(error.reason).toBe('Corrupt');
    expect((await contentVersion(dest)).version).toBe(good.version);
  });

  it('refuses content that is not the pinned version', async () => {
    const error = await failure(
      fetchBundle({
        url: bundle.bundleUrl,
        dest: join(work, 'site'),
        expectVersion: `sha256-${'1'.repeat(64)}`,
      }),
    );
    expect(error.reason).toBe('VersionMismatch');
  });

  it('reports an expired link as Expired and leaves nothing behind', async () => {
    const expired = sim.signBundleUrl(bundle.jobId, sim.now() - 60_000);
    const error = await failure(fetchBundle({ url: expired, dest: join(work, 'site') }));
    expect(error.reason).toBe('Expired');
    expect(await readdir(work)).toEqual([]);
  });

  it('gives up with Timeout at the overall deadline while a server drips bytes, leaving nothing behind', async () => {
    const drip = await serveDrip(archive, 100);
    try {
      const error = await failure(
        fetchBundle({ url: drip.url, dest: join(work, 'site'), download: { deadlineMs: 1000 } }),
      );
      expect(error.reason).toBe('Timeout');
      expect(error.message).toContain('within 1 s');
      expect(await readdir(work)).toEqual([]);
    } finally {
      await drip.close();
    }
  });

  it('reports the caller aborting as such, not as a timeout', async () => {
    const drip = await serveDrip(archive, 100);
    try {
      const error = await fetchBundle({
        url: drip.url,
        dest: join(work, 'site'),
        signal: AbortSignal.timeout(300),
      }).catch((e: unknown) => e);
      expect((error as BundleError).reason).not.toBe('Timeout');
      expect(await readdir(work)).toEqual([]);
    } finally {
      await drip.close();
    }
  });
});
