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
  it('reports each condition as 1 on its current status and 0 on the others, and its reason in a series of its own', async () => {
    const text = await scrape([
      serving,
      {
        metadata: { namespace: 'web', name: 'broken' },
        status: {
          conditions: [cond('Ready', 'False', 'ExportFailed'), cond('Stalled', 'True', 'ExportFailed')],
        },
      },
    ]);
    const ready = (name: string, status: string) =>
      `static_export_release_condition{namespace="web",name="${name}",type="Ready",status="${status}"}`;
    expect(text).toContain(`${ready('docs', 'True')} 1`);
    expect(text).toContain(`${ready('docs', 'False')} 0`);
    expect(text).toContain(`${ready('docs', 'Unknown')} 0`);
    expect(text).toContain(`${ready('broken', 'False')} 1`);
    expect(text).toContain(`${ready('broken', 'True')} 0`);
    expect(text).toContain(
      'static_export_release_condition{namespace="web",name="broken",type="Stalled",status="True"} 1',
    );
    const reasons = text.split('\n').filter((l) => l.startsWith('static_export_release_condition_reason{'));
    expect(reasons.sort()).toEqual([
      'static_export_release_condition_reason{namespace="web",name="broken",type="Ready",reason="ExportFailed"} 1',
      'static_export_release_condition_reason{namespace="web",name="broken",type="Stalled",reason="ExportFailed"} 1',
      'static_export_release_condition_reason{namespace="web",name="docs",type="Ready",reason="Published"} 1',
    ]);
  });

  it('keeps the condition series when the reason changes, and ends the old reason series', async () => {
    // What made the alerts never fire: a failing site alternates ExportFailed and Exporting.
    let reason = 'ExportFailed';
    const m = new Metrics({ processMetrics: false });
    registerReleaseMetrics(m, () => [
      {
        metadata: { namespace: 'web', name: 'new' },
        status: { conditions: [cond('Ready', 'False', reason)] },
      },
    ]);
    const condition = (text: string) =>
      text.split('\n').filter((l) => l.startsWith('static_export_release_condition{'));
    const before = await m.text();
    reason = 'Exporting';
    const after = await m.text();
    expect(condition(after)).toEqual(condition(before));
    expect(condition(after)).toContain(
      'static_export_release_condition{namespace="web",name="new",type="Ready",status="True"} 0',
    );
    expect(after).toContain(
      'static_export_release_condition_reason{namespace="web",name="new",type="Ready",reason="Exporting"} 1',
    );
    expect(after).not.toContain('reason="ExportFailed"');
  });

  it('reports a release not reconciled yet as Ready Unknown, so "not Ready" alerts see it', async () => {
    const text = await scrape([{ metadata: { namespace: 'web', name: 'new' } }]);
    expect(text).toContain(
      'static_export_release_condition{namespace="web",name="new",type="Ready",status="Unknown"} 1',
    );
    expect(text).toContain(
      'static_export_release_condition_reason{namespace="web",name="new",type="Ready",reason=""} 1',
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
