// Failures where pods meet them (issue 18, item 4), on the real node, with a client reading the site
// through the Service all along:
// (a) a roll whose new pods refuse the site (the chart's minPages above the site's page count): the
//     init container fails with the reason in its log, the old pods keep serving, the release
//     reports RolloutStalled; the chart mended, the roll completes;
// (b) the operator down until the link expired, then a scale-up: the new pod's fetch is refused and
//     the kubelet retries it with backoff while the old pod serves; the operator back, it renews the
//     link and that same pod starts, without anyone touching it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubeconfig, kubectlOk } from '../../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS, readContinuously, statusOf } from '../../support/cluster/real-node.ts';
import { getRelease, requestExport } from '../../support/cluster/resources.ts';
import {
  installSite,
  podReady,
  refusedPod,
  type SitePod,
  sitePods,
  useSiteSuite,
} from '../../support/cluster/site-on-node.ts';
import { CHART_DIR, helm } from '../../support/tools/chart.ts';

const controlPlaneDir = inject('controlPlaneDir');

const ready = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

describe.runIf(controlPlaneDir)('a roll whose new pods refuse the site, on the real node', () => {
  const h = useSiteSuite('node-refused');

  it(
    'keeps the old pods serving, reports RolloutStalled, and completes once the chart is mended',
    async () => {
      const { base } = await installSite(h.ns, 'docs', { spec: { rollout: { timeout: '20s' } } });
      const client = readContinuously(`${base}/getting-started`);
      let answers = { ok: 0, failed: [] as string[] };
      const upgrade = (minPages: number) =>
        helm('helm4', [
          'upgrade',
          'docs',
          CHART_DIR,
          '--kubeconfig',
          kubeconfig(),
          '--namespace',
          h.ns,
          '--reuse-values',
          '--set',
          `staticExport.fetch.minPages=${minPages}`,
        ]);
      try {
        // The sample site has a handful of pages: every new pod's site check refuses it.
        const raised = await upgrade(1000);
        expect(raised.code, raised.stderr).toBe(0);
        writeFileSync(join(h.docsDir, 'new-page.md'), '# Freshly written\n\nAdded by the refused roll.\n');
        await requestExport(h.ns, 'docs');
        const stalled = await eventually(
          'Ready=False, RolloutStalled',
          async () => {
            const c = ready(await getRelease(h.ns, 'docs'));
            return c?.status === 'False' && c.reason === 'RolloutStalled' ? c : undefined;
          },
          180_000,
        );
        expect(stalled.message).toMatch(/spec\.rollout\.timeout|rolled out/);
        const refused = await eventually(
          'a new pod whose fetch refused the site',
          () => refusedPod(h.ns, 'docs', /min-pages/),
          120_000,
        );
        expect(refused.log).toMatch(/the site in the bundle was refused: .*1000/);
        // The old pods still serve the old version through the Service.
        expect(await statusOf(`${base}/new-page`)).toBe(404);
        expect(await statusOf(`${base}/getting-started`)).toBe(200);
      } finally {
        answers = await client.stop();
      }
      // Every request while the new pods were refused was answered (the mended roll below is an
      // ordinary one, which site.test.ts reads throughout).
      expect(answers.failed).toEqual([]);
      expect(answers.ok).toBeGreaterThan(50);

      const mended = await upgrade(1);
      expect(mended.code, mended.stderr).toBe(0);
      await eventually(
        'Ready again, the new page served',
        async () =>
          ready(await getRelease(h.ns, 'docs'))?.status === 'True' &&
          (await statusOf(`${base}/new-page`)) === 200
            ? true
            : undefined,
        240_000,
      );
    },
    REAL_NODE_START_TIMEOUT_MS,
  );
});

describe.runIf(controlPlaneDir)('a scale-up after the link expired, on the real node', () => {
  // Links that live 30 s (renewed every 20 s while the operator runs), so one expires while it is down.
  const h = useSiteSuite('node-expired', { linkTtlSeconds: 30 });

  it(
    "retries the new pod's fetch while the old pod serves, and starts it once the operator renews the link",
    async () => {
      // Pods read the link when they start: a renewal rewrites the Secret and rolls nothing.
      const { base, deployment } = await installSite(h.ns, 'docs', {
        spec: { rollout: { onLinkRenewal: 'None' } },
        values: { replicaCount: 1 },
      });
      const replicaSets = async () =>
        (
          await kubectlOk(['get', 'rs', '-n', h.ns, '-l', 'app.kubernetes.io/instance=docs', '-o', 'name'])
        ).trim();
      const before = await replicaSets();
      const client = readContinuously(`${base}/getting-started`);
      let answers = { ok: 0, failed: [] as string[] };
      let stuck: SitePod | undefined;
      try {
        await h.restartOperator(undefined, async () => {
          const secret = JSON.parse(
            await kubectlOk(['get', 'secret', 'docs-values', '-n', h.ns, '-o', 'json']),
          ) as {
            data: { bundleUrl: string };
          };
          const link = Buffer.from(secret.data.bundleUrl, 'base64').toString();
          await eventually(
            'the link in the Secret expired',
            async () => ((await statusOf(link)) === 403 ? true : undefined),
            60_000,
          );
          await kubectlOk(['scale', deployment, '-n', h.ns, '--replicas=2']);
          const refused = await eventually(
            "the new pod's fetch refused the expired link",
            () => refusedPod(h.ns, 'docs', /expired/),
            120_000,
          );
          expect(refused.log).not.toContain(link);
          stuck = refused.pod;
          // The kubelet tries again, waiting longer each time, while the pod is not Ready.
          await eventually(
            'the fetch retried',
            async () => {
              const pod = (await sitePods(h.ns, 'docs')).find(
                (p) => p.metadata.name === stuck?.metadata.name,
              );
              const fetch = pod?.status.initContainerStatuses?.find((c) => c.name === 'fetch');
              return (fetch?.restartCount ?? 0) >= 1 && pod && !podReady(pod) ? true : undefined;
            },
            120_000,
          );
        });
        // Back up, the operator renews the link; the stuck pod's next try takes it and the pod starts.
        await eventually(
          'the pod that was refused Ready',
          async () => {
            const pod = (await sitePods(h.ns, 'docs')).find((p) => p.metadata.name === stuck?.metadata.name);
            return pod && podReady(pod) ? pod : undefined;
          },
          300_000,
        );
      } finally {
        answers = await client.stop();
      }
      // Nothing was rolled: the same ReplicaSet, and both pods serve.
      expect(await replicaSets()).toBe(before);
      expect((await sitePods(h.ns, 'docs')).filter(podReady).length).toBe(2);
      expect(answers.failed).toEqual([]);
      expect(answers.ok).toBeGreaterThan(50);
    },
    REAL_NODE_START_TIMEOUT_MS,
  );
});
