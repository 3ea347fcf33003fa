// A renewed link is tried with a one-byte read before it is written: against the simulator's
// presigned links (its object store: signature, expiry, Range), and loopback servers for the
// answers it does not give.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundleError } from '../../../src/bundle/errors.ts';
import { probeLink } from '../../../src/bundle/link-probe.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { type ExportedBundle, exportBundle, generateLink } from '../../support/servers/sim-export.ts';
import { refusedUrl, serveBytes } from './serve.ts';

let sim: Simulator;
let bundle: ExportedBundle;

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 0 });
  bundle = await exportBundle(sim);
});
afterAll(() => sim.close());

const downloads = () => sim.requests.filter((r) => r.endpoint === 'download');

async function refused(url: string): Promise<BundleError> {
  const error = await rejectionOf(probeLink(url, { timeoutMs: 2_000 }), BundleError);
  // Whatever went wrong, the link's signature never shows up in the message.
  expect(error.message).not.toMatch(/sig=|expires=|X-Amz/i);
  return error;
}

describe('probeLink', () => {
  it('passes a live link with one ranged request of one byte', async () => {
    const fresh = await generateLink(sim, bundle.jobId);
    const before = downloads().length;
    await probeLink(fresh.bundleUrl);
    expect(
      downloads()
        .slice(before)
        .map((r) => `${r.method} ${r.status}`),
    ).toEqual(['GET 206']);
  });

  it('refuses a link that expired before its time (as the object store answers: 403): Expired', async () => {
    const dead = sim.signBundleUrl(bundle.jobId, sim.now() - 60_000);
    const error = await refused(dead);
    expect(error.reason).toBe('Expired');
    expect(error.message).toMatch(/answered 403 to a one-byte read: the link is refused/);
  });

  it('refuses a link whose signature does not hold: Expired', async () => {
    const fresh = await generateLink(sim, bundle.jobId);
    const tampered = fresh.bundleUrl.replace(
      /([?&][^=]*sig[^=]*=)([^&])/i,
      (_, k: string, c: string) => `${k}${c === 'A' ? 'B' : 'A'}`,
    );
    expect(tampered).not.toBe(fresh.bundleUrl);
    expect((await refused(tampered)).reason).toBe('Expired');
  });

  it('refuses what the store answers for a missing object (404), or a redirect it does not follow', async () => {
    for (const status of [404, 302]) {
      const server = createServer((_req, res) => {
        res.writeHead(status, status === 302 ? { location: 'http://127.0.0.1:9/elsewhere' } : {});
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        const error = await refused(`http://127.0.0.1:${port}/bundle.tar.gz?sig=secret`);
        expect(error.reason).toBe('HttpStatus');
        expect(error.message).toContain(`answered HTTP ${status}`);
      } finally {
        server.close();
      }
    }
  });

  it('passes a server that ignores Range (200) without reading its body', async () => {
    const served = await serveBytes(Buffer.alloc(16 * 1024 * 1024, 1));
    try {
      const started = performance.now();
      await probeLink(served.url);
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await served.close();
    }
  });

  it('refuses a host that does not answer: Network', async () => {
    expect((await refused(await refusedUrl())).reason).toBe('Network');
  });
});
