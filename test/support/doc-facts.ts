// What the docs tests check pages against, read from the code and the charts themselves: the CRDs'
// fields, the metrics the operator registers, the chart's alerts, the charts' values and
// containers, and the CLI's commands with their flags.
import type { Command } from 'commander';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/main.ts';
import { registerBudgetMetrics } from '../../src/controllers/budget-metrics.ts';
import type { ApiClients } from '../../src/controllers/credentials.ts';
import { registerReleaseMetrics } from '../../src/controllers/release-metrics.ts';
import { StartBudgets } from '../../src/controllers/static-export-release/budget/start-budget.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { readRepoFile, repoFiles } from './markdown.ts';

export interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  default?: unknown;
}

/** Every field under `prefix` (spec or status), `[]` marking array items, with its default as pages show it ('' for none). */
export function schemaFields(schema: Schema, prefix: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (node: Schema, path: string) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const field = `${path}.${name}`;
      // Object defaults (spec.rollout, spec.publishGate) are their fields' defaults, shown there.
      out.set(
        field,
        child.default === undefined || typeof child.default === 'object' ? '' : String(child.default),
      );
      walk(child, field);
    }
    if (node.items) walk(node.items, `${path}[]`);
  };
  walk(schema, prefix);
  return out;
}

/** The names of the metrics the operator registers (Node's process metrics aside). */
export function registeredMetricNames(): string[] {
  const metrics = new Metrics({ processMetrics: false });
  registerReleaseMetrics(metrics, () => []);
  // The clients are read only when the metrics are collected, which the docs tests never do.
  registerBudgetMetrics(metrics, {} as ApiClients, new StartBudgets());
  return metrics.registry.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name);
}

/** The alerts of the operator chart's PrometheusRule. */
export function chartAlerts(): string[] {
  const rule = readRepoFile('charts/static-export-operator/templates/prometheusrule.yaml');
  return [...rule.matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1] ?? '');
}

/** A chart's default values (charts/<chart>/values.yaml). */
export function chartValues(chart: string): unknown {
  return parse(readRepoFile(`charts/${chart}/values.yaml`));
}

/**
 * Whether `path` (dotted, as `--set` takes it) names a value of `values`. Below an empty map or a
 * list (podAnnotations, topologySpreadConstraints) anything goes: the chart takes what it is given.
 */
export function hasValue(values: unknown, path: string): boolean {
  let node = values;
  for (const key of path.split('.')) {
    if (Array.isArray(node)) return true;
    if (typeof node !== 'object' || node === null) return false;
    const entries = Object.keys(node);
    if (entries.length === 0) return true;
    if (!entries.includes(key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** The names of the containers (init containers included) of the charts' workloads. */
export function chartContainers(): string[] {
  const templates = repoFiles(/^charts\/[\w-]+\/templates\/[^/]+\.yaml$/)
    .map(readRepoFile)
    .join('\n');
  return [...new Set([...templates.matchAll(/^\s*- name: ([\w-]+)\n\s*image:/gm)].map((m) => m[1] ?? ''))];
}

/** The `static-export` program as `completion` builds it, every command loaded. */
export async function cliProgram(): Promise<Command> {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  return buildProgram({ stdout: sink, stderr: sink, env: {} });
}
