// docs/operations.md against what the operator exports and the chart alerts on: every metric the
// operator registers is described under Metrics, and every alert of the operator chart's
// PrometheusRule under Alerts (with what to do). Both ways.
import { describe, expect, it } from 'vitest';
import { chartAlerts, registeredMetricNames } from '../../support/fixtures/doc-facts.ts';
import { codeSpans, proseLines, readRepoFile, sectionRows } from '../../support/fixtures/markdown.ts';

const PAGE = readRepoFile('docs/operations.md');

/** The lines of the section under `## title`, down to the next `## `. */
function section(title: string): string {
  const lines = proseLines(PAGE).map((l) => l.text);
  const start = lines.indexOf(`## ${title}`);
  expect(start, `docs/operations.md has a section ${title}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

describe('docs/operations.md', () => {
  it("describes every metric the operator registers (Node's process metrics aside), and no other", () => {
    const registered = registeredMetricNames();
    const documented = codeSpans(section('Metrics'))
      .map((span) => /^(static_export_[a-z_]+)(?:\{[^}]*\})?$/.exec(span)?.[1])
      .filter((name): name is string => name !== undefined);
    expect(sorted(documented)).toEqual(sorted(registered));
  });

  it("lists every alert of the operator chart's PrometheusRule with what to do, and no other", () => {
    const alerts = chartAlerts();
    expect(alerts.length).toBeGreaterThan(0);
    const rows = sectionRows(PAGE, 'Alerts');
    expect(sorted(rows.map((row) => codeSpans(row[0] ?? '')[0] ?? ''))).toEqual(sorted(alerts));
    for (const row of rows) expect(row[2], `what to do for ${row[0]}`).toMatch(/\S/);
  });
});
