import { afterEach, describe, expect, it } from 'vitest';
import { type HealthServer, startHealthServer } from '../../../src/runtime/health.ts';
import { Metrics } from '../../../src/runtime/metrics.ts';
import { runShutdown } from '../../../src/runtime/shutdown.ts';
import { WorkQueue } from '../../../src/runtime/work-queue.ts';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Metrics', () => {
  it('reports queue depth at scrape time, admin API calls and bundle bytes', async () => {
    const m = new Metrics({ processMetrics: false });
    const q = new WorkQueue();
    m.trackQueue('release', q);
    q.add('a');
    q.add('b');
    m.observeAdminApiCall('POST /v1/static-export/jobs', 202, 0.12);
    m.observeAdminApiCall('GET /v1/static-export/jobs/{jobId}', 'timeout', 1);
    m.bundleBytes.inc(1234);
    const text = await m.text();
    expect(text).toContain('static_export_workqueue_depth{controller="release"} 2');
    // Replaced by the per-release timestamps (release-metrics.ts): no duplicate series remain.
    expect(text).not.toContain('static_export_link_expiry_seconds');
    expect(text).toContain(
      'static_export_admin_api_requests_total{endpoint="POST /v1/static-export/jobs",code="202"} 1',
    );
    expect(text).toContain(
      'static_export_admin_api_requests_total{endpoint="GET /v1/static-export/jobs/{jobId}",code="timeout"} 1',
    );
    expect(text).toContain('static_export_bundle_bytes_total 1234');
    q.shutDown();
  });

  it('keeps registries of two instances apart', async () => {
    const a = new Metrics({ processMetrics: false });
    const b = new Metrics({ processMetrics: false });
    a.bundleBytes.inc(5);
    expect(await b.text()).toContain('static_export_bundle_bytes_total 0');
  });
});

describe('health server', () => {
  it('serves /healthz, /readyz from the callback, and /metrics', async () => {
    const m = new Metrics({ processMetrics: false });
    let ready = false;
    server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      registry: m.registry,
      ready: () => ready,
    });
    const base = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    ready = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('static_export_reconcile_total');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('reports not ready when the callback throws', async () => {
    server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      registry: new Metrics({ processMetrics: false }).registry,
      ready: () => {
        throw new Error('bug');
      },
    });
    expect((await fetch(`http://127.0.0.1:${server.port}/readyz`)).status).toBe(503);
  });
});

describe('runShutdown', () => {
  it('runs steps in order and continues past a failing step', async () => {
    const order: string[] = [];
    const clean = await runShutdown(
      [
        { name: 'informers', run: () => order.push('informers') },
        {
          name: 'queues',
          run: async () => {
            order.push('queues');
            throw new Error('x');
          },
        },
        { name: 'lease', run: async () => order.push('lease') },
      ],
      1_000,
    );
    expect(order).toEqual(['informers', 'queues', 'lease']);
    expect(clean).toBe(false);
  });

  it('gives up at the deadline', async () => {
    const order: string[] = [];
    const started = Date.now();
    const clean = await runShutdown(
      [
        { name: 'hangs', run: () => new Promise(() => {}) },
        { name: 'never', run: () => order.push('never') },
      ],
      50,
    );
    expect(clean).toBe(false);
    expect(order).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
