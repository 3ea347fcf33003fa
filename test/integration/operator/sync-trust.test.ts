// Issue 29 item 2: with spec.rollout.onNewContent Sync the operator completes a sync only on what the
// pods' own sidecars report since the publish. The site chart with its sync sidecar installed by real
// Helm, kwok running its pod, a sidecar-less Deployment reading the same Secret, and someone who may
// patch pods/status (here the admin) writing "serving <version>" on both: the sync does not complete
// until the chart pod's sidecar reports with its own bound token.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { createLogger } from '../../../src/log.ts';
import { KubeClient, resourcePath } from '../../../src/runtime/kube-client.ts';
import { PodConditionReporter } from '../../../src/sync/reporter.ts';
import { eventsFor, eventually, kubeconfig, kubectlOk, tokenKubeconfig } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease, requestExport } from '../../support/cluster/resources.ts';
import { CHART_DIR, helm, helmInstall } from '../../support/tools/chart.ts';

const h = useOperatorSuite({ namespaces: ['sync-trust'], kubeClient: true });

const NAME = 'site';
const CHART_DEPLOYMENT = 'docs-static-export-site';
const CONDITION = 'staticexport.dev/ContentServed';

interface Pod {
  metadata: { name: string };
  status: { conditions?: { type: string; status: string }[] };
}

const podsOf = async (selector: string) =>
  (await h.kube.list<Pod>(resourcePath('v1', 'pods', h.ns), { labelSelector: selector })).items;
const readyPod = (selector: string) =>
  eventually(`a Ready pod of ${selector}`, async () => {
    const pods = await podsOf(selector);
    return pods.length === 1 &&
      pods[0]?.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
      ? pods[0].metadata.name
      : undefined;
  });

/** What someone allowed to patch pods/status (not the pod's sidecar) writes. */
const forge = (pod: string, version: string, lastTransitionTime: string) =>
  kubectlOk([
    ...['patch', 'pod', pod, '-n', h.ns, '--subresource=status', '--type=strategic', '-p'],
    JSON.stringify({
      status: {
        conditions: [
          {
            type: CONDITION,
            status: 'True',
            reason: 'Serving',
            message: `serving ${version}`,
            lastTransitionTime,
          },
        ],
      },
    }),
  ]);

/**
 * The release once `test` holds of what it serves. A stalled sync is looked at every 30 s; an export
 * request (of unchanged content, every few seconds) has it judged again sooner.
 */
async function untilSync(
  what: string,
  test: (c: NonNullable<StaticExportRelease['status']>['current']) => boolean,
) {
  let asked = Date.now();
  return eventually(
    what,
    async () => {
      const r = await getRelease(h.ns, NAME);
      if (test(r.status?.current)) return r;
      if (Date.now() - asked > 5_000) {
        asked = Date.now();
        await requestExport(h.ns, NAME);
      }
      return undefined;
    },
    90_000,
  );
}

describe('a forged ContentServed does not complete a sync', () => {
  it('neither one from before the publish nor one on a pod without a running sync container; the sidecar’s own report does', async () => {
    const installed = await helmInstall('helm4', {
      release: 'docs',
      chart: CHART_DIR,
      namespace: h.ns,
      values: {
        replicaCount: 1,
        staticExport: { enabled: true, existingSecret: `${NAME}-values`, sync: { enabled: true } },
      },
    });
    expect(installed.code, installed.stderr).toBe(0);
    try {
      await kubectlOk(
        ['apply', '-n', h.ns, '-f', '-'],
        JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'plain', labels: { 'staticexport.dev/values-secret': `${NAME}-values` } },
          spec: {
            selector: { matchLabels: { app: 'plain' } },
            template: {
              metadata: { labels: { app: 'plain' } },
              spec: { containers: [{ name: 'web', image: 'nginx' }] },
            },
          },
        }),
      );
      await applyRelease(h.ns, NAME, { rollout: { onNewContent: 'Sync', timeout: '1s' } });
      const chartPod = await readyPod('app.kubernetes.io/instance=docs');
      const plainPod = await readyPod('app=plain');
      const syncing = await untilSync('the sync recorded', (c) => c?.rollout?.via === 'Sync');
      const version = syncing.status?.current?.version ?? '';
      const published = syncing.status?.history?.find((e) => e.version === version)?.appliedAt ?? '';
      expect(published).not.toBe('');

      // A condition from before the publish on the chart's pod, a fresh one on the sidecar-less pod.
      const stale = new Date(Date.parse(published) - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
      await forge(chartPod, version, stale);
      await forge(plainPod, version, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
      // (A sync the forgeries completed ends the wait too, and fails below.)
      const distrusted = await untilSync('both forged reports named, or the sync completed', (c) =>
        Boolean(
          c?.rollout?.completedAt ||
            (c?.rollout?.stalled?.includes(chartPod) && c.rollout.stalled.includes(plainPod)),
        ),
      );
      const rec = distrusted.status?.current?.rollout;
      expect(rec?.completedAt).toBeUndefined();
      expect(rec?.stalled).toContain(
        `Deployment/${CHART_DEPLOYMENT} pod ${chartPod} reports serving ${version} since ${stale}, before it was published at`,
      );
      expect(rec?.stalled).toContain(
        `Deployment/plain pod ${plainPod} reports serving ${version}, but its sync container is not running and ready`,
      );
      expect((await eventsFor(h.ns, NAME)).map((e) => e.reason)).not.toContain('Synced');

      // The chart pod's sidecar reports with the token the kubelet would give it; the sidecar-less
      // workload goes: the sync completes.
      const token = (
        await kubectlOk([
          ...['create', 'token', `${CHART_DEPLOYMENT}-sync`, '-n', h.ns, '--duration=1h'],
          ...['--bound-object-kind', 'Pod', '--bound-object-name', chartPod],
        ])
      ).trim();
      const sidecar = await KubeClient.create(tokenKubeconfig(token));
      try {
        const reporter = new PodConditionReporter(sidecar, h.ns, chartPod, createLogger({ level: 'silent' }));
        await reporter.report({
          type: CONDITION,
          status: 'True',
          reason: 'Serving',
          message: `serving ${version}`,
        });
      } finally {
        await sidecar.close();
      }
      await kubectlOk(['delete', 'deployment', 'plain', '-n', h.ns, '--wait=false']);
      await untilSync('the sync completed', (c) => Boolean(c?.rollout?.completedAt));
      expect((await eventsFor(h.ns, NAME)).map((e) => e.reason)).toContain('Synced');
    } finally {
      await helm('helm4', ['uninstall', 'docs', '--kubeconfig', kubeconfig(), '-n', h.ns]);
    }
  });
});
