// One destination policy for bundle links from the platform (src/bundle/link-destination.ts): what
// counts as public, and the refusal coming before any connection, for a literal address and for a
// name that resolves to one. Every address a test could reach is loopback: a refused loopback link
// would reach the simulator and show up in its requests if the refusal came too late.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleCache } from '../../../src/bundle/cache.ts';
import { openDownload } from '../../../src/bundle/download.ts';
import { BundleError } from '../../../src/bundle/errors.ts';
import { guardLink, isPublicAddress } from '../../../src/bundle/link-destination.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { type ExportedBundle, exportBundle } from '../../support/servers/sim-export.ts';

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, metadata, mapped and reserved addresses; takes public ones', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      'not-an-address',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])
      expect(isPublicAddress(address), address).toBe(true);
  });

  it("allows the admin API's own host and everything with the opt-in, with no look-up", () => {
    expect(guardLink('http://127.0.0.1:9/x', { allowPrivate: false, apiHost: '127.0.0.1' })).toEqual({});
    expect(guardLink('http://[::1]:9/x', { allowPrivate: false, apiHost: '::1' })).toEqual({});
    expect(guardLink('http://10.1.2.3/x', { allowPrivate: true })).toEqual({});
    expect(() => guardLink('http://[fe80::1]/x', { allowPrivate: false })).toThrow(/leads to fe80::1/);
  });
});

describe('openDownload with destinations', () => {
  let sim: Simulator;
  let bundle: ExportedBundle;
  beforeAll(async () => {
    sim = await startSimulator({ exportDurationMs: 0 });
    bundle = await exportBundle(sim);
  });
  afterAll(() => sim.close());
  const downloads = () => sim.requests.filter((r) => r.endpoint === 'download');

  it('refuses a literal loopback link before connecting, without retrying, and keeps the signature out', async () => {
    const before = downloads().length;
    const { body, done } = openDownload({ url: bundle.bundleUrl, destinations: { allowPrivate: false } });
    body.resume();
    const error = await rejectionOf(done, BundleError);
    expect((error as BundleError).reason).toBe('LinkDestinationRefused');
    expect((error as BundleError).message).toContain('leads to 127.0.0.1');
    expect((error as BundleError).message).not.toContain(new URL(bundle.bundleUrl).search);
    expect(downloads().length).toBe(before);
  });

  it('refuses a name that resolves to loopback before connecting (localhost)', async () => {
    const before = downloads().length;
    const url = new URL(bundle.bundleUrl);
    url.hostname = 'localhost';
    const { body, done } = openDownload({ url: url.toString(), destinations: { allowPrivate: false } });
    body.resume();
    const error = await rejectionOf(done, BundleError);
    expect((error as BundleError).reason).toBe('LinkDestinationRefused');
    expect((error as BundleError).message).toMatch(/leads to (127\.0\.0\.1|::1)/);
    expect(downloads().length).toBe(before);
  });

  it("downloads from the admin API's host, or anywhere with the opt-in", async () => {
    for (const destinations of [{ allowPrivate: false, apiHost: '127.0.0.1' }, { allowPrivate: true }]) {
      const { body, done } = openDownload({ url: bundle.bundleUrl, destinations });
      body.resume();
      expect((await done).sizeBytes).toBe(bundle.sizeBytes);
    }
  });

  it("refuses it in the operator's bundle cache too, before connecting", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'link-destination-cache-'));
    try {
      const cache = await BundleCache.open({ dir, maxEntries: 10 });
      const before = downloads().length;
      const error = await rejectionOf(
        cache.fetch('a'.repeat(64), { url: bundle.bundleUrl, destinations: { allowPrivate: false } }),
        BundleError,
      );
      expect(error.reason).toBe('LinkDestinationRefused');
      expect(downloads().length).toBe(before);
      const fetched = await cache.fetch('b'.repeat(64), {
        url: bundle.bundleUrl,
        destinations: { allowPrivate: false, apiHost: '127.0.0.1' },
      });
      expect(fetched.sizeBytes).toBe(bundle.sizeBytes);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
