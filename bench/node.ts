// What users meet on a real node (issue 18): the local control plane with the real node, the
// simulator on the node's bridge address (pods fetch from it), the operator on the host, the site
// chart (existing-Secret mode, two replicas) and the operator chart on the node.
// - publish -> new page served through the Service: p50 and p95 over BENCH_PUBLISHES (default 10)
//   publishes, for a site that rolls (onNewContent Rollout) and one whose sync sidecars swap the
//   version in place (Sync), with a client reading a page and its hashed asset throughout (failed
//   requests and mixed-version pages counted; goal 0), and a rollback (a pin to the version before)
//   of each;
// - a scale-up's new pod Ready (scheduled, image there, bundle fetched, nginx up), for the sample site
//   and for a 20,000-page site (BENCH_NODE_PAGES), beside `static-export fetch` alone on the host;
// - the operator pod's memory (the container's working set, from crictl) idle with 10 releases.
import { type ExecFileSyncOptionsWithStringEncoding, execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { NODE_IP, nodePaths, ON_REAL_NODE } from '../scripts/control-plane/node.ts';
import { DEFAULT_DOCS_DIR } from '../src/simulator/index.ts';
import { readPageAndAsset, type VersionedReads, writeMarker } from '../test/support/cluster/real-node.ts';
import { ROOT } from './build.ts';
import { type LocalStack, startLocalStack } from './local-stack.ts';

const NS = 'docs';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

interface Pod {
  metadata: { name: string; creationTimestamp: string; deletionTimestamp?: string };
  status: { conditions?: { type: string; status: string; lastTransitionTime: string }[] };
}

/** Not execFileSync: the simulator lives in this process, and the pods Helm waits for fetch from it. */
async function helm(stack: LocalStack, args: string[]): Promise<void> {
  await promisify(execFile)(join(ROOT, '.tools/bin/helm'), [...args, '--kubeconfig', stack.cp.kubeconfig], {
    encoding: 'utf8',
    env: { ...process.env, HOME: stack.dir },
  });
}

const values = (stack: LocalStack, v: object) => {
  const file = join(stack.dir, `values-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(v));
  return file;
};

async function requestExport(stack: LocalStack, name: string, value: string): Promise<void> {
  await stack.kubectl([
    'annotate',
    'ser',
    name,
    '-n',
    NS,
    '--overwrite',
    `staticexport.dev/requested-at=${value}`,
  ]);
}

/** Seconds from scaling the site up by one to the new pod Ready (seen by polling every 100 ms). */
async function podToReady(stack: LocalStack, deployment: string): Promise<number> {
  const list = async () =>
    (
      JSON.parse(
        await stack.kubectl(['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/instance=docs', '-o', 'json']),
      ) as { items: Pod[] }
    ).items.filter((p) => !p.metadata.deletionTimestamp);
  const before = new Set((await list()).map((p) => p.metadata.name));
  const t0 = performance.now();
  await stack.kubectl(['scale', deployment, '-n', NS, `--replicas=${before.size + 1}`]);
  for (const deadline = t0 + 600_000; performance.now() < deadline; await sleep(100)) {
    const fresh = (await list()).find((p) => !before.has(p.metadata.name));
    if (fresh?.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
      const seconds = (performance.now() - t0) / 1000;
      await stack.kubectl(['scale', deployment, '-n', NS, `--replicas=${before.size}`]);
      await stack.kubectl(['rollout', 'status', deployment, '-n', NS, '--timeout=300s']);
      return seconds;
    }
  }
  throw new Error('the new pod did not become Ready within 10 min');
}

/** Seconds `static-export fetch` takes on the host for the link in the site's values Secret. */
async function fetchOnHost(stack: LocalStack): Promise<number> {
  const link = Buffer.from(
    await stack.kubectl(['get', 'secret', 'docs-values', '-n', NS, '-o', 'jsonpath={.data.bundleUrl}']),
    'base64',
  ).toString();
  const dest = join(stack.dir, 'fetch-alone');
  const t0 = performance.now();
  await promisify(execFile)(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'fetch', '--dest', dest], {
    env: { ...process.env, STATIC_EXPORT_BUNDLE_URL: link },
  });
  const seconds = (performance.now() - t0) / 1000;
  rmSync(dest, { recursive: true, force: true });
  return seconds;
}

const servedPages = async (stack: LocalStack) =>
  stack.kubectl(['get', 'ser', 'docs', '-n', NS, '-o', 'jsonpath={.status.current.pageCount}']);

interface Site {
  name: string;
  deployment: string;
  /** The Service's address, `http://IP:PORT`. */
  base: string;
}

/** A release of `domain` with spec.rollout.onNewContent `mode`, published, and the site chart serving it. */
async function installSiteWith(
  stack: LocalStack,
  tag: string,
  name: string,
  domain: string,
  mode: 'Rollout' | 'Sync',
): Promise<Site> {
  await stack.kubectl(
    ['apply', '-f', '-'],
    stringify({
      apiVersion: 'staticexport.dev/v1alpha1',
      kind: 'StaticExportRelease',
      metadata: { name, namespace: NS },
      spec: {
        domain,
        credentialsSecretRef: { name: 'admin-key' },
        target: { valuesSecret: { name: `${name}-values` } },
        rollout: { onNewContent: mode },
      },
    }),
  );
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(250)) {
    if (await stack.kubectl(['get', 'ser', name, '-n', NS, '-o', 'jsonpath={.status.current.version}']))
      break;
  }
  await helm(stack, [
    'install',
    name,
    join(ROOT, 'charts/static-export-site'),
    '-n',
    NS,
    '--wait',
    '--timeout',
    '300s',
    '-f',
    values(stack, {
      staticExport: { enabled: true, existingSecret: `${name}-values`, sync: { enabled: mode === 'Sync' } },
      image: { tag },
      nginx: { image: { tag: 'offline' } },
      ...ON_REAL_NODE,
    }),
  ]);
  const selector = `app.kubernetes.io/instance=${name}`;
  const deployment = (await stack.kubectl(['get', 'deploy', '-n', NS, '-l', selector, '-o', 'name'])).trim();
  await stack.kubectl(['rollout', 'status', deployment, '-n', NS, '--timeout=300s']);
  const svc = JSON.parse(await stack.kubectl(['get', 'service', '-n', NS, '-l', selector, '-o', 'json'])) as {
    items: { spec: { clusterIP: string; ports: { port: number }[] } }[];
  };
  const base = `http://${svc.items[0]?.spec.clusterIP}:${svc.items[0]?.spec.ports[0]?.port}`;
  // A new Service answers once kube-proxy has programmed it.
  await untilServed(base, 'marker v0');
  return { name, deployment, base };
}

/** Milliseconds-precise time until `base`/marker says `text` (polled every 50 ms, 300 s at most). */
async function untilServed(base: string, text: string): Promise<number> {
  const t0 = performance.now();
  for (const deadline = t0 + 300_000; performance.now() < deadline; await sleep(50)) {
    const res = await fetch(`${base}/marker`).catch(() => undefined);
    const body = (await res?.text()) ?? '';
    if (res?.status === 200 && body.includes(text)) return performance.now();
  }
  throw new Error(`${base}/marker did not serve "${text}" within 300 s`);
}

/**
 * `rounds` publishes of new docs to `site`, from marker version `first` on: seconds from the
 * request to the new page served through the Service, with a reader of a page and its asset throughout.
 */
async function publishRounds(
  stack: LocalStack,
  site: Site,
  docsDir: string,
  first: number,
  rounds: number,
): Promise<{ samples: number[]; reads: VersionedReads }> {
  const reader = readPageAndAsset(`${site.base}/marker`);
  const samples: number[] = [];
  let reads: VersionedReads;
  try {
    for (let n = first; n < first + rounds; n++) {
      await stack.kubectl(['rollout', 'status', site.deployment, '-n', NS, '--timeout=300s']);
      writeMarker(docsDir, n);
      const t0 = performance.now();
      await requestExport(stack, site.name, `bench-${n}`);
      samples.push(((await untilServed(site.base, `marker v${n}`)) - t0) / 1000);
    }
    await stack.kubectl(['rollout', 'status', site.deployment, '-n', NS, '--timeout=300s']);
  } finally {
    reads = await reader.stop();
  }
  return { samples, reads };
}

/** Seconds from pinning the version before the served one to its page (marker `previous`) served; then unpinned. */
async function rollback(stack: LocalStack, site: Site, previous: number): Promise<number> {
  const status = JSON.parse(
    await stack.kubectl(['get', 'ser', site.name, '-n', NS, '-o', 'jsonpath={.status}']),
  ) as { current?: { version?: string }; history?: { version: string }[] };
  // history is newest first; the version before is the first that is not served now.
  const before = status.history?.find((h) => h.version !== status.current?.version)?.version;
  if (!before) throw new Error(`${site.name} has no version before the served one`);
  const t0 = performance.now();
  await stack.kubectl([
    ...['patch', 'ser', site.name, '-n', NS, '--type=merge'],
    ...['-p', JSON.stringify({ spec: { pinnedVersion: before } })],
  ]);
  const seconds = ((await untilServed(site.base, `marker v${previous}`)) - t0) / 1000;
  await stack.kubectl([
    ...['patch', 'ser', site.name, '-n', NS, '--type=json'],
    ...['-p', '[{"op":"remove","path":"/spec/pinnedVersion"}]'],
  ]);
  await untilServed(site.base, `marker v${previous + 1}`);
  await stack.kubectl(['rollout', 'status', site.deployment, '-n', NS, '--timeout=300s']);
  return seconds;
}

export async function run(): Promise<void> {
  const publishes = Number(process.env.BENCH_PUBLISHES ?? 10);
  const stack = await startLocalStack({
    prefix: 'bench-node-',
    simulator: (scratch) => {
      cpSync(DEFAULT_DOCS_DIR, join(scratch, 'docs'), { recursive: true });
      return {
        host: NODE_IP,
        port: 0,
        exportDurationMs: 0,
        linkTtlSeconds: 24 * 3600,
        docsDir: join(scratch, 'docs'),
      };
    },
    namespace: NS,
    operatorArgs: ['--allow-insecure-api-base-url'],
    node: true,
  });
  try {
    const tag = await stack.cp.pushProjectImage();
    const docsDir = join(stack.dir, 'docs');
    writeMarker(docsDir, 0);
    const rolled = await installSiteWith(stack, tag, 'docs', 'docs.example.com', 'Rollout');
    const synced = await installSiteWith(stack, tag, 'synced', 'synced.example.com', 'Sync');
    const deployment = rolled.deployment;

    // Each site's rollback follows its own publishes: unpinned, it exports the docs as they are.
    const rollout = await publishRounds(stack, rolled, docsDir, 1, publishes);
    const rollbackRollout = await rollback(stack, rolled, publishes - 1);
    const sync = await publishRounds(stack, synced, docsDir, publishes + 1, publishes);
    const rollbackSync = await rollback(stack, synced, 2 * publishes - 1);
    const p50 = (xs: number[]) =>
      percentile(
        [...xs].sort((x, y) => x - y),
        50,
      );
    const p95 = (xs: number[]) =>
      percentile(
        [...xs].sort((x, y) => x - y),
        95,
      );
    for (const [what, r] of [
      ['Rollout', rollout],
      ['Sync   ', sync],
    ] as const) {
      console.log(
        `publish -> new page served, ${what}              p50 ${p50(r.samples).toFixed(2)} s, p95 ${p95(r.samples).toFixed(2)} s over ${publishes} publishes (export duration 0, 2 replicas)`,
      );
      console.log(
        `  failed requests, mixed-version pages            ${r.reads.failed.length} failed, ${r.reads.mixed.length} mixed of ${r.reads.ok + r.reads.failed.length + r.reads.mixed.length} page loads   goal 0: ${r.reads.failed.length + r.reads.mixed.length === 0 ? 'ok' : `MISSED (${[...new Set([...r.reads.failed, ...r.reads.mixed])].slice(0, 5).join('; ')})`}`,
      );
    }
    const speedup = p50(rollout.samples) / p50(sync.samples);
    console.log(
      `Sync against Rollout                              ${speedup.toFixed(1)}x faster at p50   goals: Sync p50 < 3 s ${p50(sync.samples) < 3 ? 'ok' : 'MISSED'}, >= 5x ${speedup >= 5 ? 'ok' : 'MISSED'}`,
    );
    console.log(
      `rollback (pin to the version before) -> served    Sync ${rollbackSync.toFixed(2)} s (goal < 2 s: ${rollbackSync < 2 ? 'ok' : 'MISSED'}), Rollout ${rollbackRollout.toFixed(2)} s`,
    );

    const small = await podToReady(stack, deployment);
    console.log(
      `scale-up -> new pod Ready, the sample site (${await servedPages(stack)} pages)   ${small.toFixed(2)} s`,
    );

    // A large site: 20,000 more pages, published and rolled out, then a scale-up; beside it, the
    // same bundle fetched by `static-export fetch` alone on the host (what the init container runs).
    const bigPages = Number(process.env.BENCH_NODE_PAGES ?? 20_000);
    mkdirSync(join(stack.dir, 'docs', 'big'));
    for (let i = 0; i < bigPages; i++)
      writeFileSync(join(stack.dir, 'docs', 'big', `page-${i}.md`), `# Page ${i}\n\nLarge site page ${i}.\n`);
    await requestExport(stack, 'docs', 'bench-large');
    for (const deadline = Date.now() + 600_000; Number(await servedPages(stack)) < bigPages; await sleep(500))
      if (Date.now() > deadline) throw new Error(`the ${bigPages}-page site was not published within 600 s`);
    await stack.kubectl(['rollout', 'status', deployment, '-n', NS, '--timeout=600s']);
    const large = await podToReady(stack, deployment);
    const fetchAlone = await fetchOnHost(stack);
    console.log(
      `scale-up -> new pod Ready, a ${await servedPages(stack)}-page site   ${large.toFixed(2)} s; static-export fetch alone on the host ${fetchAlone.toFixed(2)} s (${(large / fetchAlone).toFixed(2)}x; goal within 2x: ${large <= 2 * fetchAlone ? 'ok' : 'MISSED'})`,
    );

    // The operator as the chart runs it on the node, idle with 10 releases.
    await stack.kubectl(['create', 'namespace', 'operator']);
    await stack.kubectl(['create', 'namespace', 'sites']);
    await stack.kubectl([
      '-n',
      'sites',
      'create',
      'secret',
      'generic',
      'admin-key',
      `--from-literal=apiKey=${stack.sim.adminKey}`,
    ]);
    await helm(stack, [
      'install',
      'op',
      join(ROOT, 'charts/static-export-operator'),
      '-n',
      'operator',
      '--wait',
      '--timeout',
      '300s',
      '-f',
      values(stack, {
        image: { tag },
        crds: { enabled: false },
        replicaCount: 1,
        operator: { apiBaseUrl: stack.sim.baseUrl, allowInsecureApiBaseUrl: true },
        watchNamespaces: ['sites'],
        ...ON_REAL_NODE,
      }),
    ]);
    await stack.kubectl(
      ['apply', '-f', '-'],
      Array.from({ length: 10 }, (_, i) =>
        stringify({
          apiVersion: 'staticexport.dev/v1alpha1',
          kind: 'StaticExportRelease',
          metadata: { name: `site-${i}`, namespace: 'sites' },
          spec: {
            domain: `site-${i}.example.com`,
            credentialsSecretRef: { name: 'admin-key' },
            target: { valuesSecret: { name: `site-${i}-values` } },
          },
        }),
      ).join('---\n'),
    );
    await stack.kubectl(['wait', '--for=condition=Ready', 'ser', '--all', '-n', 'sites', '--timeout=300s']);
    await sleep(30_000);
    const socket = `unix://${nodePaths(stack.cp.dir).containerdSocket}`;
    const crictl = join(stack.cp.binDir, 'crictl');
    const quiet: ExecFileSyncOptionsWithStringEncoding = {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    };
    const id = execFileSync(
      crictl,
      ['--runtime-endpoint', socket, 'ps', '-q', '--name', 'operator'],
      quiet,
    ).trim();
    const stats = JSON.parse(
      execFileSync(crictl, ['--runtime-endpoint', socket, 'stats', '-o', 'json', id], quiet),
    ) as { stats: { memory: { workingSetBytes: { value: string } } }[] };
    const mb = Number(stats.stats[0]?.memory.workingSetBytes.value) / 1e6;
    console.log(
      `operator pod memory, idle with 10 releases        ${mb.toFixed(0)} MB (working set)   goal < 100 MB: ${mb < 100 ? 'ok' : 'MISSED'}`,
    );
  } finally {
    await stack.stop(5_000);
  }
}
