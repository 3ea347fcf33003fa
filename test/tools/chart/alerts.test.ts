// The operator chart's alerts as Prometheus's own tool reads them: the rendered PrometheusRule passes
// `promtool check rules`, and `promtool test rules` (alerts/rules.test.yaml) shows each alert firing
// at the chart's default durations on synthetic series shaped as the operator's (reasons that change
// while exports are retried, series that go stale), when it should, and not before or for healthy
// series. promtool is built from the Prometheus Go module (scripts/go-tools/tools.env).
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runProcess } from '../../../scripts/run-process.ts';
import { goTool } from '../../support/tools/go-tools.ts';
import { writeRuleFile } from '../../support/tools/prometheus-rule.ts';

let dir: string;
let promtool: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'alerts-'));
  promtool = await goTool('promtool');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the PrometheusRule', () => {
  it('passes promtool check rules, with the defaults and with every threshold set', async () => {
    for (const values of [
      {},
      {
        metrics: {
          prometheusRule: {
            notReadyFor: '1h30m',
            exportFailingFor: '2h',
            linkExpiresWithinSeconds: 600,
            rolloutStalledFor: '30s',
            gitWriteBackFailingFor: '1h',
            budgetExhaustedFor: '1m',
            operatorAbsentFor: '15m',
          },
        },
      },
    ]) {
      const rules = await writeRuleFile(dir, values);
      const r = await runProcess(promtool, ['check', 'rules', '--lint-fatal', rules]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('SUCCESS: 10 rules found');
    }
  });

  it('has a unit test that sees every shipped alert fire', async () => {
    const rules = parse(await readFile(await writeRuleFile(dir), 'utf8')) as {
      groups: { rules: { alert?: string }[] }[];
    };
    const shipped = rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));
    const tests = parse(await readFile(join(import.meta.dirname, 'alerts', 'rules.test.yaml'), 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const seenFiring = tests.tests.flatMap((t) =>
      (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
    );
    expect([...new Set(seenFiring)].sort()).toEqual([...shipped].sort());
  });

  it('fires each alert on synthetic series as its unit tests expect, at the default durations', async () => {
    await writeRuleFile(dir);
    await copyFile(join(import.meta.dirname, 'alerts', 'rules.test.yaml'), join(dir, 'rules.test.yaml'));
    const r = await runProcess(promtool, ['test', 'rules', join(dir, 'rules.test.yaml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
  });
});
