// From "new content published" to the serving workload rolled: the site chart installed by Helm in
// existing-Secret mode next to a StaticExportRelease on the local control plane, a simulator whose
// exports complete at once (duration 0). Each round changes the docs, sets the trigger annotation
// and times until the chart Deployment's pod template carries the new version (seen by a watch).
// Env: BENCH_TRIGGERS (default 20). Goal: p50 under 1 s.
import { execFileSync } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { KubeClient, resourcePath } from '../src/runtime/kube-client.ts';
import { DEFAULT_DOCS_DIR } from '../src/simulator/index.ts';
import { ROOT } from './build.ts';
import { startLocalStack } from './local-stack.ts';

const VERSION = 'staticexport.dev/version';
const DEPLOYMENT = 'docs-static-export-site';

interface Deployment {
  metadata: { resourceVersion: string };
  spec: { template: { metadata: { annotations?: Record<string, string> } } };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

export async function run(): Promise<void> {
  const triggers = Number(process.env.BENCH_TRIGGERS ?? 20);
  const { dir, cp, kubectl, stop } = await startLocalStack({
    prefix: 'bench-reroll-',
    // The docs are a copy: each round edits them.
    simulator: (scratch) => {
      cpSync(DEFAULT_DOCS_DIR, join(scratch, 'docs'), { recursive: true });
      return { exportDurationMs: 0, linkTtlSeconds: 24 * 3600, docsDir: join(scratch, 'docs') };
    },
    namespace: 'docs',
  });
  const docs = join(dir, 'docs');
  const kube = await KubeClient.create(cp.kubeconfig);
  const watching = new AbortController();
  try {
    execFileSync(
      join(ROOT, '.tools/bin/helm'),
      [
        'install',
        'docs',
        join(ROOT, 'charts/static-export-site'),
        '--kubeconfig',
        cp.kubeconfig,
        '-n',
        'docs',
        '--set',
        'staticExport.enabled=true',
        '--set',
        'staticExport.existingSecret=docs-values',
        '--set',
        'replicaCount=1',
      ],
      { encoding: 'utf8', env: { ...process.env, HOME: dir } },
    );
    await kubectl(
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'staticexport.dev/v1alpha1',
        kind: 'StaticExportRelease',
        metadata: { name: 'docs', namespace: 'docs' },
        spec: {
          domain: 'docs.example.com',
          credentialsSecretRef: { name: 'admin-key' },
          target: { valuesSecret: { name: 'docs-values' } },
        },
      }),
    );

    // Every version the Deployment's template carries, with when the watch saw it.
    const seen = new Map<string, number>();
    const path = resourcePath('apps/v1', 'deployments', 'docs');
    void (async () => {
      const query = { fieldSelector: `metadata.name=${DEPLOYMENT}` };
      for await (const ev of kube.watch<Deployment>(path, query, watching.signal)) {
        const v = ev.object.spec?.template?.metadata?.annotations?.[VERSION];
        if (v && !seen.has(v)) seen.set(v, performance.now());
      }
    })().catch(() => undefined);
    const rolledTo = async (version: string, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      while (!seen.has(version) && performance.now() < deadline) await sleep(5);
      return seen.get(version);
    };
    const served = () =>
      kubectl(['get', 'ser', 'docs', '-n', 'docs', '-o', 'jsonpath={.status.current.version}']);
    let version = '';
    for (const deadline = Date.now() + 120_000; !version && Date.now() < deadline; await sleep(250))
      version = await served();
    if (!version || (await rolledTo(version, 30_000)) === undefined)
      throw new Error('the first version was not published and rolled within 150 s');

    const samples: number[] = [];
    for (let i = 1; i <= triggers; i++) {
      // Let the previous rollout settle: the trigger is what is measured, not a backlog.
      await sleep(1_500);
      writeFileSync(join(docs, 'bench-page.md'), `# Round ${i}\n\nContent of round ${i}.\n`);
      const before = new Set(seen.keys());
      const t0 = performance.now();
      await kube.mergePatch(
        resourcePath('staticexport.dev/v1alpha1', 'staticexportreleases', 'docs', 'docs'),
        {
          metadata: { annotations: { 'staticexport.dev/requested-at': `bench-${i}` } },
        },
      );
      let t1: number | undefined;
      for (const deadline = t0 + 30_000; t1 === undefined && performance.now() < deadline; await sleep(5)) {
        const fresh = [...seen.entries()].find(([v]) => !before.has(v));
        t1 = fresh?.[1];
      }
      if (t1 === undefined) throw new Error(`round ${i}: the Deployment was not rolled within 30 s`);
      samples.push((t1 - t0) / 1000);
    }
    const sorted = [...samples].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p95 = percentile(sorted, 95);
    console.log(`triggers                      ${triggers} (new content each, export duration 0)`);
    console.log(
      `trigger -> template rolled    p50 ${p50.toFixed(3)} s, p95 ${p95.toFixed(3)} s (min ${sorted[0]?.toFixed(3)}, max ${sorted.at(-1)?.toFixed(3)})   goal p50 < 1 s: ${p50 < 1 ? 'ok' : 'MISSED'}`,
    );
  } finally {
    watching.abort();
    await kube.close();
    await stop();
  }
}
