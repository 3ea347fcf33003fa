// The site chart on the real node beside a release (issue 18, item 2): existing-Secret mode reading
// the operator's values Secret, the init container (the static-export image) fetching the bundle
// from the link in it, nginx (the chart's unprivileged image) serving the site through the Service's
// ClusterIP from the host, through kube-proxy: the home page, extensionless pages, the 404 page;
// then new docs (item 3): the operator rolls the Deployment and a client reading the site all along
// sees no failed request (readiness, the shutdown delay and maxUnavailable 0 make that true).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { NODE_IP } from '../../../scripts/control-plane/node.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { CHART_DIR, helm, helmInstall } from '../../support/chart.ts';
import { builtImage } from '../../support/image.ts';
import { eventually, kubeconfig, kubectlOk } from '../../support/kube.ts';
import { useOperatorSuite } from '../../support/operator-suite.ts';
import { ON_REAL_NODE, REAL_NODE_START_TIMEOUT_MS, realNode, statusOf } from '../../support/real-node.ts';
import { applyRelease, getRelease } from '../../support/resources.ts';

const controlPlaneDir = inject('controlPlaneDir');

const IMAGE = 'ghcr.io/static-export-operator/static-export';

describe.runIf(controlPlaneDir)('the site chart on the real node', () => {
  /** The Service's address, once the chart is installed. */
  let base = '';
  const h = useOperatorSuite({
    namespaces: ['node-site'],
    // Where pods reach it: the node's address on its bridge, which the links it signs name.
    sim: { host: NODE_IP, port: 0, exportDurationMs: 300 },
    operator: { allowInsecureApiBaseUrl: true },
    editableDocs: true,
    beforeStart: async () => {
      const [cp, image] = await Promise.all([realNode(), builtImage()]);
      await cp.pushImage(image.layout, image.tag, `${IMAGE}:${image.tag}`);
    },
  });

  it(
    'serves the release through the Service: home page, extensionless pages and the 404 page',
    async () => {
      // The bundle's own 404 page, which the chart serves for a missing page.
      writeFileSync(join(h.docsDir, '404.md'), '# Page not found\n\nThis page does not exist.\n');
      await applyRelease(h.ns, 'docs');
      await eventually('docs Ready', async () => {
        const r: StaticExportRelease = await getRelease(h.ns, 'docs');
        return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? r : undefined;
      });
      const { tag } = await builtImage();
      const installed = await helmInstall('helm4', {
        release: 'docs',
        chart: CHART_DIR,
        namespace: h.ns,
        extra: ['--wait', '--timeout', '180s'],
        values: {
          staticExport: { enabled: true, existingSecret: 'docs-values' },
          image: { tag },
          nginx: { image: { tag: 'offline' } },
          ...ON_REAL_NODE,
        },
      });
      expect(installed.code, installed.stderr).toBe(0);

      // The operator rolls the chart's Deployment to the release's version as soon as it sees it.
      const deployment = (
        await kubectlOk(['get', 'deploy', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'name'])
      ).trim();
      await kubectlOk(['rollout', 'status', deployment, '-n', h.ns, '--timeout=180s']);
      const pods = await eventually('only the rolled pods left', async () => {
        const list = JSON.parse(
          await kubectlOk(['get', 'pods', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'json']),
        ) as { items: { metadata: { name: string }; spec: { nodeName: string } }[] };
        return list.items.length === 2 ? list : undefined;
      });
      expect(pods.items.length).toBe(2);
      for (const p of pods.items) {
        expect(p.spec.nodeName).toBe('static-export-node');
        const log = await kubectlOk(['logs', p.metadata.name, '-n', h.ns, '-c', 'fetch']);
        expect(log).toMatch(/sha256-[0-9a-f]{64}/);
      }

      const service = JSON.parse(
        await kubectlOk([
          'get',
          'service',
          '-n',
          h.ns,
          '-l',
          'app.kubernetes.io/instance=docs',
          '-o',
          'json',
        ]),
      ) as { items: { spec: { clusterIP: string; ports: { port: number }[] } }[] };
      const svc = service.items[0]?.spec;
      base = `http://${svc?.clusterIP}:${svc?.ports[0]?.port}`;
      for (const [path, title] of [
        ['/', '<title>'],
        ['/getting-started', '<title>Getting started'],
        ['/guides/install', '<title>Install'],
      ] as const) {
        const res = await fetch(`${base}${path}`);
        expect(res.status, path).toBe(200);
        expect(await res.text(), path).toContain(title);
      }
      // helm test: the chart's test pod, on the node too, gets every page through the Service's name.
      const tested = await helm('helm4', [
        'test',
        'docs',
        '--kubeconfig',
        kubeconfig(),
        '--namespace',
        h.ns,
        '--logs',
      ]);
      expect(tested.code, tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/Phase:\s+Succeeded/);
      expect(tested.stdout).toContain('GET /');
      const missing = await fetch(`${base}/no/such/page`);
      expect(missing.status).toBe(404);
      expect(await missing.text()).toContain('Page not found');
    },
    REAL_NODE_START_TIMEOUT_MS,
  );
  it('rolls to new docs with no failed request: a client reading the site throughout sees every answer', async () => {
    expect(base).not.toBe('');
    const deployment = (
      await kubectlOk(['get', 'deploy', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'name'])
    ).trim();
    const replicaSets = async () =>
      (await kubectlOk(['get', 'rs', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'name']))
        .trim()
        .split('\n');
    const before = await replicaSets();
    // A client requesting the site continuously, one request at a time, through the whole roll; each
    // on a new connection, as a keep-alive connection to a pod that quits may be closed just as a
    // request is sent on it (a browser sends that one again; fetch reports it).
    const answers = { ok: 0, failed: [] as string[] };
    let reading = true;
    const client = (async () => {
      while (reading) {
        const why = await statusOf(`${base}/getting-started`);
        if (why === 200) answers.ok++;
        else answers.failed.push(String(why));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      writeFileSync(join(h.docsDir, 'new-page.md'), '# Freshly written\n\nAdded by the roll test.\n');
      await kubectlOk([
        'annotate',
        'ser',
        'docs',
        '-n',
        h.ns,
        '--overwrite',
        `staticexport.dev/requested-at=${new Date().toISOString()}`,
      ]);
      const page = await eventually(
        'the new page served through the Service',
        async () => {
          const res = await fetch(`${base}/new-page`);
          return res.status === 200 ? res.text() : undefined;
        },
        180_000,
      );
      expect(page).toContain('Freshly written');
      await kubectlOk(['rollout', 'status', deployment, '-n', h.ns, '--timeout=180s']);
      // The roll's old pods are gone too: their shutdown delay passed without a failed answer.
      await eventually('only the new pods left', async () => {
        const list = JSON.parse(
          await kubectlOk(['get', 'pods', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'json']),
        ) as { items: unknown[] };
        return list.items.length === 2 ? true : undefined;
      });
    } finally {
      reading = false;
      await client;
    }
    expect((await replicaSets()).filter((rs) => !before.includes(rs)).length).toBe(1);
    expect(answers.failed).toEqual([]);
    expect(answers.ok).toBeGreaterThan(50);
  }, 300_000);
});
