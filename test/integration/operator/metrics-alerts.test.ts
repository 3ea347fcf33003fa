// The operator's metrics, alerts and dashboard against a real Prometheus (built from its Go module)
// scraping the real operator on the control plane: the condition gauge and its reason series are
// queryable, the chart's not-Ready and exports-failing alerts fire (one instance per release, naming
// its reason) for a release whose export keeps failing and resolve once it publishes, and every
// dashboard query returns series. The durations are shortened here; test/tools/chart/alerts.test.ts
// proves the alerts at the chart's defaults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease } from '../../support/cluster/resources.ts';
import { type Alert, startPrometheus, type TestPrometheus } from '../../support/servers/prometheus.ts';
import { tempDir } from '../../support/temp.ts';
import { OPERATOR_CHART_DIR } from '../../support/tools/chart.ts';
import { RULE_RELEASE, writeRuleFile } from '../../support/tools/prometheus-rule.ts';

const h = useOperatorSuite({ namespaces: ['metrics'] });
// The chart's job name for the operator (its metrics Service): what StaticExportOperatorAbsent watches.
const JOB = `${RULE_RELEASE.name}-static-export-operator-metrics`;
// The simulator fails every export of a domain starting with "fail.".
const FAILING_DOMAIN = 'fail.example.com';

let prometheus: TestPrometheus;

beforeAll(async () => {
  const dir = tempDir('prometheus-');
  const rules = await writeRuleFile(dir, {
    metrics: { prometheusRule: { notReadyFor: '5s', exportFailingFor: '5s' } },
  });
  prometheus = await startPrometheus(
    [
      {
        job: JOB,
        targets: [`127.0.0.1:${h.operator.metricsPort}`],
        labels: { namespace: RULE_RELEASE.namespace },
      },
    ],
    dir,
    [rules],
  );
});
afterAll(() => prometheus?.close());

const alertsOf = async (name: string): Promise<Alert[]> =>
  (await prometheus.alerts()).filter((a) => a.labels.namespace === h.ns && a.labels.name === name);

describe('metrics through Prometheus', () => {
  it('fires the not-Ready and exports-failing alerts for a release whose export keeps failing, and resolves them once it publishes', async () => {
    await applyRelease(h.ns, 'good');
    await applyRelease(h.ns, 'broken', { domain: FAILING_DOMAIN });

    // Queryable through the HTTP API with the release's own namespace (honor_labels, as the chart's ServiceMonitor).
    const good = await eventually(
      'good is Ready in Prometheus',
      async () => {
        const r = await prometheus.query(
          `static_export_release_condition{namespace="${h.ns}",name="good",type="Ready",status="True"} == 1`,
        );
        return r.length === 1 ? r[0] : undefined;
      },
      60_000,
    );
    expect(good?.metric).toMatchObject({ job: JOB });
    expect(good?.metric).not.toHaveProperty('exported_namespace');
    expect(good?.metric).not.toHaveProperty('reason');
    const goodReason = await prometheus.query(
      `static_export_release_condition_reason{namespace="${h.ns}",name="good",type="Ready"}`,
    );
    expect(goodReason.map((s) => [s.metric.reason, s.value[1]])).toEqual([['Published', '1']]);

    const firing = await eventually(
      `broken's alerts firing (${prometheus.output().slice(-500)})`,
      async () => {
        const alerts = (await alertsOf('broken')).filter((a) => a.state === 'firing');
        const names = alerts.map((a) => a.labels.alertname).sort();
        return names.join() === 'StaticExportExportsFailing,StaticExportReleaseNotReady' ? alerts : undefined;
      },
      90_000,
    );
    for (const alert of firing) {
      // One instance per release: no reason or scraped pod's labels that would split it.
      expect(Object.keys(alert.labels).sort()).toEqual(['alertname', 'name', 'namespace', 'severity']);
      expect(alert.annotations.summary).toContain(`${h.ns}/broken`);
      expect(alert.annotations.description).toContain('(reason now: ExportFailed)');
    }
    expect(await alertsOf('good')).toEqual([]);
    expect((await prometheus.alerts()).map((a) => a.labels.alertname)).not.toContain(
      'StaticExportOperatorAbsent',
    );

    // Fixed: the spec change exports again, the release publishes, and the alerts resolve.
    await applyRelease(h.ns, 'broken', { domain: 'docs.example.com' });
    await eventually("broken's alerts resolved", async () => (await alertsOf('broken')).length === 0, 90_000);
    const ready = await prometheus.query(
      `static_export_release_condition{namespace="${h.ns}",name="broken",type="Ready",status="True"}`,
    );
    expect(ready.map((s) => s.value[1])).toEqual(['1']);
  });

  it('answers every dashboard query with series', async () => {
    // A release not Ready, for the panels that list those.
    await applyRelease(h.ns, 'stuck', { domain: FAILING_DOMAIN });
    const dashboard = JSON.parse(
      readFileSync(join(OPERATOR_CHART_DIR, 'dashboards/static-export-operator.json'), 'utf8'),
    ) as { panels: { title: string; targets: { expr: string }[] }[] };
    // Nothing in this file makes a reconcile fail.
    const mayBeEmpty = new Set(['Reconcile errors']);
    const empty: string[] = [];
    await eventually(
      'every dashboard panel has series',
      async () => {
        empty.length = 0;
        for (const panel of dashboard.panels) {
          if (mayBeEmpty.has(panel.title)) continue;
          let series = 0;
          for (const t of panel.targets)
            series += (await prometheus.query(t.expr.replaceAll('$job', '.*'))).length;
          if (series === 0) empty.push(panel.title);
        }
        return empty.length === 0;
      },
      60_000,
    ).catch((err: unknown) => {
      throw new Error(`dashboard panels without series: ${empty.join(', ')} (${String(err)})`);
    });
  });
});
