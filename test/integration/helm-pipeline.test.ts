// The plain-Helm pipeline README shows, for Helm 3.18 and Helm 4.1.4 against the real control
// plane: `static-export export --values-out v.yaml` (the real CLI, against the simulator), then
// `helm upgrade --reset-then-reuse-values -f v.yaml`. The link travels in a file (never --set: commas
// split it and it shows in process listings); the new version rolls the pods; values given earlier
// are kept; the link is in the chart's Secret and not in the Deployment or the ConfigMap.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { createNamespace, kubeconfig, kubectl, kubectlOk } from '../support/cluster/kube.ts';
import { sampleDocsCopy } from '../support/temp.ts';
import { CHART_DIR, type HelmName, helm, scratchDir, valuesFile } from '../support/tools/chart.ts';
import { decode, getObject } from '../support/tools/gitops.ts';
import { runCli } from '../support/tools/run-cli.ts';

let sim: Simulator;
let docs: string;
const namespaces: string[] = [];

beforeAll(async () => {
  docs = sampleDocsCopy();
  sim = await startSimulator({ docsDir: docs, exportDurationMs: 300 });
});

afterAll(async () => {
  await sim?.close();
  for (const ns of namespaces) await kubectl(['delete', 'namespace', ns, '--wait=false']);
});

/** One pipeline run's first step: the values file with the link and version. */
async function exportValues(file: string): Promise<{ bundleUrl: string; version: string }> {
  const r = await runCli(
    ['export', '--domain', 'docs.example.com', '--poll-interval', '100ms', '--values-out', file],
    {
      STATIC_EXPORT_API_URL: sim.baseUrl,
      STATIC_EXPORT_API_KEY: sim.adminKey,
    },
  );
  expect(r.code, r.stderr).toBe(0);
  return (parse(readFileSync(file, 'utf8')) as { staticExport: { bundleUrl: string; version: string } })
    .staticExport;
}

describe.each<[HelmName]>([['helm3'], ['helm4']])('the pipeline with %s', (name) => {
  it('export --values-out, then helm upgrade --reset-then-reuse-values -f: new version rolled, earlier values kept', async () => {
    const ns = await createNamespace(`pipeline-${name}`);
    namespaces.push(ns);
    const version = await helm(name, ['version', '--short']);
    expect(version.stdout).toMatch(name === 'helm3' ? /^v3\.18\./ : /^v4\.1\.4/);
    const kube = ['--kubeconfig', kubeconfig(), '--namespace', ns];
    const values = join(await scratchDir('pipeline-'), 'v.yaml');

    const first = await exportValues(values);
    // Set once at install, never repeated by the pipeline.
    const base = await valuesFile({ replicaCount: 1, podAnnotations: { team: 'docs' } });
    const installed = await helm(name, ['install', 'docs', CHART_DIR, ...kube, '-f', base, '-f', values]);
    expect(installed.code, installed.stderr).toBe(0);

    writeFileSync(join(docs, `${name}.md`), `# Published by the ${name} pipeline\n\nNew content.\n`);
    const second = await exportValues(values);
    expect(second.version).not.toBe(first.version);
    const upgraded = await helm(name, [
      ...['upgrade', 'docs', CHART_DIR, ...kube],
      ...['--reset-then-reuse-values', '-f', values],
    ]);
    expect(upgraded.code, upgraded.stderr).toBe(0);

    const deployment = await getObject('deployment', 'docs-static-export-site', ns);
    const spec = deployment.spec as {
      replicas: number;
      template: { metadata: { annotations: Record<string, string> } };
    };
    expect(spec.template.metadata.annotations['staticexport.dev/version']).toBe(second.version);
    expect(spec.template.metadata.annotations.team).toBe('docs');
    expect(spec.replicas).toBe(1);
    const secret = await getObject('secret', 'docs-static-export-site', ns);
    expect(decode(secret.data?.bundleUrl)).toBe(second.bundleUrl);
    const configMaps = await kubectlOk(['get', 'configmaps', '-n', ns, '-o', 'json']);
    for (const [where, text] of Object.entries({ deployment: JSON.stringify(deployment), configMaps })) {
      expect(text.includes(second.bundleUrl), where).toBe(false);
      expect(text.includes(first.bundleUrl), where).toBe(false);
    }
  });
});
