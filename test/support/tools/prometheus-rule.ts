// The operator chart's PrometheusRule as Prometheus reads it: the chart rendered by the real Helm
// with the rule enabled, its spec (the rule groups) written as a Prometheus rule file.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { helmTemplate, merge, OPERATOR_CHART_DIR } from './chart.ts';

/** The release and namespace the rule is rendered for: the operator's job is `seo-static-export-operator-metrics`. */
export const RULE_RELEASE = { name: 'seo', namespace: 'ops' } as const;

/** Renders the PrometheusRule with `values` and writes its groups to `dir/rules.yaml`; returns that path. */
export async function writeRuleFile(dir: string, values: object = {}): Promise<string> {
  const rendered = await helmTemplate(
    'helm4',
    merge({ metrics: { prometheusRule: { enabled: true } } }, values),
    RULE_RELEASE.name,
    { chart: OPERATOR_CHART_DIR, namespace: RULE_RELEASE.namespace },
  );
  const rule = rendered.objects.find((o) => o.kind === 'PrometheusRule');
  if (!rule) throw new Error(`the chart rendered no PrometheusRule: ${rendered.stderr}`);
  const file = join(dir, 'rules.yaml');
  await writeFile(file, stringify((rule as unknown as { spec: object }).spec));
  return file;
}
