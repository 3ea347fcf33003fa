// The per-release gauges as a user reads them on /metrics: conditions in cert-manager's shape,
// timestamps in seconds, nothing for what a release does not have.
import { describe, expect, it } from 'vitest';
import { registerReleaseMetrics } from '../../../src/controllers/release-metrics.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { Metrics } from '../../../src/runtime/metrics.ts';

type Release = Pick<StaticExportRelease, 'metadata' | 'status'>;

const T = '2026-11-25T10:00:00Z';
const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: T,
});

async function scrape(releases: Release[]): Promise<string> {
  const m = new Metrics({ processMetrics: false });
  registerReleaseMetrics(m, () => releases);
  return m.text();
}

const serving: Release = {
  metadata: { namespace: 'web', name: 'docs' },
  status: {
    conditions: [cond('Ready', 'True', 'Published')],
    current: {
      version: 'sha256-abc',
      expiresAt: '2026-11-25T11:00:00Z',
      renewalTime: '2026-11-25T10:40:00Z',
    },
    history: [
      { version: 'sha256-abc', appliedAt: '2026-11-25T09:30:00Z' },
      { version: 'sha256-old', appliedAt: '2026-11-24T09:30:00Z' },
    ],
    exportDurationsSeconds: [42.5, 60],
  },
};

describe('release metrics', () => {
  it('reports each condition as 1 on its current status and 0 on the others, with its reason', async () => {
    const text = await scrape([
      serving,
      {
        metadata: { namespace: 'web', name: 'broken' },
        status: {
          conditions: [cond('Ready', 'False', 'ExportFailed'), cond('Stalled', 'True', 'ExportFailed')],
        },
      },
    ]);
    const ready = (name: string, status: string, reason: string) =>
      `static_export_release_condition{namespace="web",name="${name}",type="Ready",status="${status}",reason="${reason}"}`;
    expect(text).toContain(`${ready('docs', 'True', 'Published')} 1`);
    expect(text).toContain(`${ready('docs', 'False', 'Published')} 0`);
    expect(text).toContain(`${ready('docs', 'Unknown', 'Published')} 0`);
    expect(text).toContain(`${ready('broken', 'False', 'ExportFailed')} 1`);
    expect(text).toContain(`${ready('broken', 'True', 'ExportFailed')} 0`);
    expect(text).toContain(
      'static_export_release_condition{namespace="web",name="broken",type="Stalled",status="True",reason="ExportFailed"} 1',
    );
  });

  it('reports a release not reconciled yet as Ready Unknown, so "not Ready" alerts see it', async () => {
    const text = await scrape([{ metadata: { namespace: 'web', name: 'new' } }]);
    expect(text).toContain(
      'static_export_release_condition{namespace="web",name="new",type="Ready",status="Unknown",reason=""} 1',
    );
    expect(text).not.toMatch(/static_export_release_last_published_timestamp_seconds\{/);
  });

  it('reports when the served version was published, the last export duration and the link times', async () => {
    const text = await scrape([serving]);
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(text).toContain(
      `static_export_release_last_published_timestamp_seconds{namespace="web",name="docs"} ${at('2026-11-25T09:30:00Z')}`,
    );
    expect(text).toContain(
      'static_export_release_last_export_duration_seconds{namespace="web",name="docs"} 42.5',
    );
    expect(text).toContain(
      `static_export_release_link_expiration_timestamp_seconds{namespace="web",name="docs"} ${at('2026-11-25T11:00:00Z')}`,
    );
    expect(text).toContain(
      `static_export_release_link_renewal_timestamp_seconds{namespace="web",name="docs"} ${at('2026-11-25T10:40:00Z')}`,
    );
  });

  it('drops the series of a release that left the cache (deleted, or leadership lost)', async () => {
    let releases: Release[] = [serving];
    const m = new Metrics({ processMetrics: false });
    registerReleaseMetrics(m, () => releases);
    expect(await m.text()).toContain('name="docs"');
    releases = [];
    expect(await m.text()).not.toContain('name="docs"');
  });

  it('gives a release that follows a registry no link series', async () => {
    const text = await scrape([
      {
        metadata: { namespace: 'gap', name: 'docs' },
        status: {
          conditions: [cond('Ready', 'True', 'Published')],
          current: { version: 'registry.local/docs@sha256:0' },
        },
      },
    ]);
    expect(text).not.toMatch(/static_export_release_link_\w+\{namespace="gap"/);
  });
});
