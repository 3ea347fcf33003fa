// The site chart on the real node beside a release (issue 18, item 2): existing-Secret mode reading
// the operator's values Secret, the init container (the static-export image) fetching the bundle
// from the link in it, nginx (the chart's unprivileged image) serving the site through the Service's
// ClusterIP from the host, through kube-proxy: the home page, extensionless pages, the 404 page;
// then new docs (item 3): the operator rolls the Deployment and a client reading the site all along
// sees no failed request (readiness, the shutdown delay and maxUnavailable 0 make that true).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { eventually, kubeconfig, kubectlOk } from '../../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS, readContinuously } from '../../support/cluster/real-node.ts';
import { requestExport } from '../../support/cluster/resources.ts';
import { installSite, sitePods, useSiteSuite } from '../../support/cluster/site-on-node.ts';
import { helm } from '../../support/tools/chart.ts';

const controlPlaneDir = inject('controlPlaneDir');

describe.runIf(controlPlaneDir)('the site chart on the real node', () => {
  /** The Service's address, once the chart is installed. */
  let base = '';
  let deployment = '';
  const h = useSiteSuite('node-site');

  it(
    'serves the release through the Service: home page, extensionless pages and the 404 page',
    async () => {
      // The bundle's own 404 page, which the chart serves for a missing page.
      writeFileSync(join(h.docsDir, '404.md'), '# Page not found\n\nThis page does not exist.\n');
      ({ base, deployment } = await installSite(h.ns, 'docs'));
      const pods = await eventually('only the rolled pods left', async () => {
        const list = await sitePods(h.ns, 'docs');
        return list.length === 2 ? list : undefined;
      });
      for (const p of pods) {
        expect(p.spec.nodeName).toBe('static-export-node');
        const log = await kubectlOk(['logs', p.metadata.name, '-n', h.ns, '-c', 'fetch']);
        expect(log).toMatch(/sha256-[0-9a-f]{64}/);
      }
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
    const replicaSets = async () =>
      (await kubectlOk(['get', 'rs', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'name']))
        .trim()
        .split('\n');
    const before = await replicaSets();
    // A client requesting the site continuously, one request at a time, through the whole roll; each
    // on a new connection, as a keep-alive connection to a pod that quits may be closed just as a
    // request is sent on it (a browser sends that one again; fetch reports it).
    const client = readContinuously(`${base}/getting-started`);
    let answers = { ok: 0, failed: [] as string[] };
    try {
      writeFileSync(join(h.docsDir, 'new-page.md'), '# Freshly written\n\nAdded by the roll test.\n');
      await requestExport(h.ns, 'docs');
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
      await eventually('only the new pods left', async () =>
        (await sitePods(h.ns, 'docs')).length === 2 ? true : undefined,
      );
    } finally {
      answers = await client.stop();
    }
    expect((await replicaSets()).filter((rs) => !before.includes(rs)).length).toBe(1);
    expect(answers.failed).toEqual([]);
    expect(answers.ok).toBeGreaterThan(50);
  }, 300_000);
});
