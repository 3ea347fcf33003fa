// Publish without restarts on the real node (issue 20): the site chart with its content sync sidecar
// (staticExport.sync.enabled) beside a release with spec.rollout.onNewContent Sync. A new version,
// a pin back to a kept one, two publishes in quick succession, a pod deleted while a version syncs,
// and a version the sidecars refuse: the same pods keep serving (no roll), a reader of a page and
// its hashed asset never sees a failed or mixed page, and the release says when every pod serves it.

import { describe, expect, inject, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import {
  REAL_NODE_START_TIMEOUT_MS,
  readPageAndAsset,
  writeMarker,
} from '../../support/cluster/real-node.ts';
import { getRelease, requestExport } from '../../support/cluster/resources.ts';
import {
  installSite,
  podReady,
  type SitePod,
  sitePods,
  useSiteSuite,
} from '../../support/cluster/site-on-node.ts';

const controlPlaneDir = inject('controlPlaneDir');
const NAME = 'docs';

type Condition = { type: string; status: string; reason?: string; message?: string };
type Pod = SitePod & {
  status: SitePod['status'] & { containerStatuses?: { name: string; restartCount: number }[] };
};

const served = (p: Pod) =>
  (p.status.conditions as Condition[] | undefined)?.find((c) => c.type === 'staticexport.dev/ContentServed');
const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

describe.runIf(controlPlaneDir)('publishing without restarts on the real node', () => {
  const h = useSiteSuite('node-sync');
  let base = '';
  let deployment = '';
  /** The pods serving since the install: a sync never replaces them. */
  let podNames: string[] = [];

  /** The release once every ready pod serves its current version (a completed sync), and that version. */
  const synced = (after?: string) =>
    eventually(
      'every pod serves the release’s version',
      async () => {
        const r = await getRelease(h.ns, NAME);
        const rec = r.status?.current?.rollout;
        const version = r.status?.current?.version;
        if (
          !version ||
          version === after ||
          rec?.via !== 'Sync' ||
          rec.version !== version ||
          !rec.completedAt
        )
          return undefined;
        return { release: r, version };
      },
      180_000,
    );

  const pods = async () => (await sitePods(h.ns, NAME)) as Pod[];
  const page = async () => (await fetch(`${base}/marker`)).text();
  /** spec.pinnedVersion set, or removed with null (a merge patch). */
  const pin = (version: string | null) =>
    kubectlOk([
      'patch',
      'ser',
      NAME,
      '-n',
      h.ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { pinnedVersion: version } }),
    ]);
  /** Until the Service serves docs version `n` (writeMarker). */
  const serving = (n: number) =>
    eventually(
      `v${n} served through the Service`,
      async () => ((await page()).includes(`marker v${n}`) ? true : undefined),
      180_000,
    );

  it(
    'serves the first version from the init container, and the release reports every pod serving it',
    async () => {
      writeMarker(h.docsDir, 1);
      ({ base, deployment } = await installSite(h.ns, NAME, {
        spec: { rollout: { onNewContent: 'Sync' } },
        values: { staticExport: { sync: { enabled: true }, fetch: { minPages: 8 } } },
      }));
      const { version } = await synced();
      const list = await eventually('two ready pods', async () => {
        const l = await pods();
        return l.length === 2 && l.every(podReady) ? l : undefined;
      });
      podNames = list.map((p) => p.metadata.name).sort();
      for (const p of list) {
        expect(served(p)).toMatchObject({ status: 'True', reason: 'Serving', message: `serving ${version}` });
        expect(p.status.containerStatuses?.map((c) => c.name).sort()).toEqual(['nginx', 'sync']);
      }
      expect(await page()).toContain('marker v1');
      // Nothing rolled the chart's Deployment: its template carries no version annotation.
      const annotations = await kubectlOk([
        ...['get', deployment, '-n', h.ns, '-o', 'jsonpath={.spec.template.metadata.annotations}'],
      ]);
      expect(annotations).not.toContain('staticexport.dev/version');
    },
    REAL_NODE_START_TIMEOUT_MS,
  );

  it('publishes new docs to the same pods: no roll, no restart, no failed or mixed page', async () => {
    const before = (await synced()).version;
    const reader = readPageAndAsset(`${base}/marker`);
    let reads: Awaited<ReturnType<typeof reader.stop>>;
    try {
      writeMarker(h.docsDir, 2);
      await requestExport(h.ns, NAME);
      await serving(2);
      await synced(before);
    } finally {
      reads = await reader.stop();
    }
    expect(reads.failed).toEqual([]);
    expect(reads.mixed).toEqual([]);
    expect(reads.versions).toEqual(['v1', 'v2']);
    const now = await pods();
    expect(now.map((p) => p.metadata.name).sort()).toEqual(podNames);
    for (const p of now)
      for (const c of p.status.containerStatuses ?? []) expect(c.restartCount, c.name).toBe(0);
  }, 300_000);

  it('a pin to the version served before is a swap: the old page is back, nothing downloaded', async () => {
    const { release, version: v2 } = await synced();
    const v1 = release.status?.history?.find((e) => e.version !== v2)?.version;
    expect(v1).toBeDefined();
    await pin(v1 ?? null);
    await serving(1);
    expect((await synced(v2)).version).toBe(v1);
    for (const p of await pods()) {
      const log = await kubectlOk(['logs', p.metadata.name, '-n', h.ns, '-c', 'sync']);
      expect(log).toContain(`serving ${v1} (kept on disk, no download)`);
    }
    await pin(null);
    await serving(2);
  }, 300_000);

  it('two publishes in quick succession end serving the newest', async () => {
    const before = (await synced()).version;
    writeMarker(h.docsDir, 3);
    await requestExport(h.ns, NAME);
    await eventually(
      'v3 exported',
      async () => ((await getRelease(h.ns, NAME)).status?.current?.version !== before ? true : undefined),
      120_000,
    );
    writeMarker(h.docsDir, 4);
    await requestExport(h.ns, NAME);
    await serving(4);
    const { version } = await synced();
    for (const p of await pods()) expect(served(p)?.message).toBe(`serving ${version}`);
  }, 300_000);

  it('a pod deleted while a version syncs is replaced by one serving the complete new version', async () => {
    const before = (await synced()).version;
    writeMarker(h.docsDir, 5);
    await requestExport(h.ns, NAME);
    const [victim] = podNames;
    await kubectlOk(['delete', 'pod', victim ?? '', '-n', h.ns, '--wait=false']);
    const { version } = await synced(before);
    const now = await eventually(
      'two ready pods serving v5',
      async () => {
        const l = await pods();
        return l.length === 2 && l.every((p) => podReady(p) && served(p)?.message === `serving ${version}`)
          ? l
          : undefined;
      },
      180_000,
    );
    expect(now.map((p) => p.metadata.name)).not.toContain(victim);
    for (let i = 0; i < 10; i++) {
      const reader = readPageAndAsset(`${base}/marker`);
      await new Promise((r) => setTimeout(r, 100));
      const reads = await reader.stop();
      expect(reads.failed).toEqual([]);
      expect(reads.mixed).toEqual([]);
      expect(reads.versions).toEqual(['v5']);
    }
    podNames = now.map((p) => p.metadata.name).sort();
  }, 300_000);

  it('a version the sidecars refuse keeps the served one and turns the release RolloutStalled naming the pod; the next good one recovers', async () => {
    const before = (await synced()).version;
    // The chart's site check wants 8 pages (the docs have 9); this export has 6, which the
    // operator's publish gate (at most a 50 % drop) lets through.
    const upgraded = await kubectlOk([
      'get',
      deployment,
      '-n',
      h.ns,
      '-o',
      'jsonpath={.metadata.generation}',
    ]);
    h.sim.configure({ faults: ['start:pages=6:1:1'] });
    writeMarker(h.docsDir, 6);
    await requestExport(h.ns, NAME);
    const stalled = await eventually(
      'RolloutStalled',
      async () => {
        const r = await getRelease(h.ns, NAME);
        return readyOf(r)?.reason === 'RolloutStalled' && r.status?.current?.version !== before
          ? r
          : undefined;
      },
      180_000,
    );
    expect(readyOf(stalled)?.message).toMatch(
      /pod .*: serving sha256-[0-9a-f]{64}; sha256-[0-9a-f]{64} failed: .*pages/,
    );
    expect(await page()).toContain('marker v5');
    for (const p of await pods()) {
      expect(podReady(p)).toBe(true);
      expect(served(p)).toMatchObject({ status: 'False', reason: 'FetchFailed' });
      expect(served(p)?.message).toContain(`serving ${before}`);
    }
    h.sim.configure({ faults: [] });
    writeMarker(h.docsDir, 7);
    await requestExport(h.ns, NAME);
    await serving(7);
    const { release } = await synced(stalled.status?.current?.version);
    expect(readyOf(release)?.status).toBe('True');
    expect(await kubectlOk(['get', deployment, '-n', h.ns, '-o', 'jsonpath={.metadata.generation}'])).toBe(
      upgraded,
    );
  }, 300_000);
});
