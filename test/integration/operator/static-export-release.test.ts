// The StaticExportRelease controller on the real control plane, against the simulator through the
// production client: what a user sees in status, events, the values Secret and the simulator log.
import { writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fetchBundle } from '../../../src/bundle/index.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { resourcePath } from '../../../src/runtime/kube-client.ts';
import { eventsFor, eventually, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import {
  applyRelease as applyReleaseIn,
  applySecret,
  getRelease as getReleaseIn,
  requestExport,
} from '../../support/cluster/resources.ts';
import { tempDir } from '../../support/temp.ts';

const h = useOperatorSuite({ namespaces: ['ser'], editableDocs: true, kubeClient: true });

const applyRelease = (name: string, spec?: Record<string, unknown>, annotations?: Record<string, string>) =>
  applyReleaseIn(h.ns, name, spec, annotations);
const getRelease = (name: string) => getReleaseIn(h.ns, name);

const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

async function until(
  name: string,
  what: string,
  test: (r: StaticExportRelease) => boolean,
  timeoutMs = 60_000,
) {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const r = await getRelease(name);
      return test(r) ? r : undefined;
    },
    timeoutMs,
  );
}

async function valuesOf(name: string) {
  const s = JSON.parse(await kubectlOk(['get', 'secret', `${name}-values`, '-n', h.ns, '-o', 'json'])) as {
    metadata: { resourceVersion: string; ownerReferences?: { kind: string; name: string }[] };
    data: Record<string, string>;
  };
  const values = parse(Buffer.from(s.data['values.yaml'] ?? '', 'base64').toString()) as {
    staticExport: { enabled: boolean; bundleUrl: string; version: string };
  };
  return {
    values: values.staticExport,
    resourceVersion: s.metadata.resourceVersion,
    owners: s.metadata.ownerReferences,
  };
}

const eventsOf = (name: string) => eventsFor(h.ns, name);

const trigger = (name: string, value: string) => requestExport(h.ns, name, value);

describe('StaticExportRelease', () => {
  it('exports, verifies and publishes: Ready with version and renewal, values Secret written, one export job', async () => {
    const before = h.sim.exportJobsStarted();
    await applyRelease('site');
    const r = await until('site', 'Ready', (x) => readyOf(x)?.status === 'True');

    expect(r.status?.current?.version).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(Date.parse(r.status?.current?.renewalTime ?? '')).toBeLessThan(
      Date.parse(r.status?.current?.expiresAt ?? ''),
    );
    expect(r.status?.history).toHaveLength(1);
    expect(r.status?.observedGeneration).toBe(r.metadata.generation);
    expect(h.sim.exportJobsStarted() - before).toBe(1);

    const { values, owners } = await valuesOf('site');
    expect(values.enabled).toBe(true);
    expect(values.version).toBe(r.status?.current?.version);
    expect(owners).toEqual([expect.objectContaining({ kind: 'StaticExportRelease', name: 'site' })]);
    // The link in the values serves exactly the version in status.
    const fetched = await fetchBundle({ url: values.bundleUrl, dest: tempDir('check-') });
    expect(fetched.version).toBe(values.version);

    const reasons = (await eventsOf('site')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['ExportStarted', 'ExportCompleted', 'Published']));

    const table = await kubectlOk(['get', 'ser', 'site', '-n', h.ns]);
    expect(table).toContain(r.status?.current?.version);
  });

  it('re-exports on trigger: unchanged docs keep the version and write nothing, changed docs publish a new version', async () => {
    const first = await getRelease('site');
    const firstValues = await valuesOf('site');
    const started = h.sim.exportJobsStarted();

    await trigger('site', 'same-content');
    const same = await until(
      'site',
      'trigger handled',
      (x) => x.status?.lastHandledRequestedAt === 'same-content' && Boolean(x.status?.export?.finishedAt),
    );
    expect(h.sim.exportJobsStarted()).toBe(started + 1);
    expect(same.status?.current).toEqual(first.status?.current);
    expect((await valuesOf('site')).resourceVersion).toBe(firstValues.resourceVersion);
    expect((await eventsOf('site')).map((e) => e.reason)).toContain('Unchanged');

    writeFileSync(join(h.docsDir, 'getting-started.md'), '# Getting started\n\nNew content for this test.\n');
    await trigger('site', 'new-content');
    const changed = await until(
      'site',
      'new version',
      (x) => x.status?.current?.version !== first.status?.current?.version,
    );
    expect(changed.status?.history?.map((e) => e.version)).toEqual([
      changed.status?.current?.version,
      first.status?.current?.version,
    ]);
    const v = await valuesOf('site');
    expect(v.values.version).toBe(changed.status?.current?.version);
    expect(v.values.bundleUrl).not.toBe(firstValues.values.bundleUrl);
  });

  it('pins a version from history: serves it again and renews only its link', async () => {
    const r = await getRelease('site');
    const old = r.status?.history?.[1];
    expect(old).toBeDefined();
    const started = h.sim.exportJobsStarted();
    await applyRelease('site', { pinnedVersion: old?.version });
    await until(
      'site',
      'pinned version served',
      (x) => x.status?.current?.version === old?.version && readyOf(x)?.status === 'True',
    );
    expect((await valuesOf('site')).values.version).toBe(old?.version);
    expect(h.sim.exportJobsStarted()).toBe(started);

    await applyRelease('site', { pinnedVersion: `sha256-${'0'.repeat(64)}` });
    const unknown = await until(
      'site',
      'unknown pin refused',
      (x) => readyOf(x)?.reason === 'PinnedVersionUnknown',
    );
    expect(readyOf(unknown)?.message).toContain(old?.version);

    await applyRelease('site');
    await until(
      'site',
      'unpinned and Ready',
      (x) => readyOf(x)?.status === 'True' && x.status?.observedGeneration === x.metadata.generation,
    );
  });

  it('renews the link before it expires, keeping the version', async () => {
    h.sim.configure({ linkTtlSeconds: 6 });
    await applyRelease('renew');
    const first = await until('renew', 'Ready', (x) => readyOf(x)?.status === 'True');
    const firstUrl = (await valuesOf('renew')).values.bundleUrl;
    const renewed = await until(
      'renew',
      'link renewed',
      (x) => x.status?.current?.expiresAt !== first.status?.current?.expiresAt,
      20_000,
    );
    expect(renewed.status?.current?.version).toBe(first.status?.current?.version);
    expect(renewed.status?.current?.jobId).toBe(first.status?.current?.jobId);
    expect(Date.parse(first.status?.current?.expiresAt ?? '')).toBeGreaterThan(Date.now() - 1_000);
    expect((await valuesOf('renew')).values.bundleUrl).not.toBe(firstUrl);
    expect((await eventsOf('renew')).map((e) => e.reason)).toContain('LinkRenewed');
    h.sim.configure({ linkTtlSeconds: 600 });
    await kubectlOk(['delete', 'ser', 'renew', '-n', h.ns]);
  });

  it('repairs a deleted values Secret', async () => {
    const before = await getRelease('site');
    await kubectlOk(['delete', 'secret', 'site-values', '-n', h.ns]);
    const repaired = await eventually(
      'values Secret back',
      async () => await valuesOf('site').catch(() => undefined),
    );
    expect(repaired.values.version).toBe(before.status?.current?.version);
    expect((await eventsOf('site')).map((e) => e.reason)).toContain('TargetRepaired');
  });

  it('says which Secret is missing, and acts as soon as it exists', async () => {
    await applyRelease('nokey', { credentialsSecretRef: { name: 'later-key' } });
    const r = await until('nokey', 'SecretNotFound', (x) => readyOf(x)?.reason === 'SecretNotFound');
    expect(readyOf(r)?.message).toContain(`Secret ${h.ns}/later-key`);
    expect(r.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    // No trigger: the operator watches the Secrets its releases name.
    await applySecret(h.ns, 'later-key', { token: h.sim.adminKey });
    const wrongKey = await until(
      'nokey',
      'SecretKeyNotFound',
      (x) => readyOf(x)?.reason === 'SecretKeyNotFound',
    );
    expect(readyOf(wrongKey)?.message).toContain('keys: token');
    await applyRelease('nokey', { credentialsSecretRef: { name: 'later-key', key: 'token' } });
    await until('nokey', 'Ready', (x) => readyOf(x)?.status === 'True');
  });

  it('removes what it created when the release is deleted', async () => {
    await applyRelease('gone');
    await until('gone', 'Ready', (x) => readyOf(x)?.status === 'True');
    await kubectlOk(['delete', 'ser', 'gone', '-n', h.ns]);
    await eventually(
      'values Secret garbage-collected',
      async () => (await kubectl(['get', 'secret', 'gone-values', '-n', h.ns])).code !== 0,
    );
  });

  it('deleted during a slow download: the download stops, no values Secret is written, the work directory is left empty', async () => {
    const secrets = resourcePath('v1', 'secrets', h.ns);
    const since = (await h.kube.list(secrets)).metadata.resourceVersion;
    h.sim.configure({ faults: ['download:delay=5000:1'] });
    try {
      await applyRelease('deleted');
      await eventually('downloading', async () =>
        h.logs.some((l) => l.includes(`"release":"${h.ns}/deleted"`) && l.includes('"mode":"NewContent"')),
      );
      await kubectlOk(['delete', 'ser', 'deleted', '-n', h.ns]);
      // Past the delay: a download that went on would have written by now.
      await new Promise((r) => setTimeout(r, 6_000));
      const added: string[] = [];
      const watching = AbortSignal.timeout(2_000);
      try {
        for await (const e of h.kube.watch<{ metadata: { name: string } }>(
          secrets,
          { resourceVersion: since },
          watching,
        )) {
          if (e.type === 'ADDED') added.push(e.object.metadata.name);
        }
      } catch (e) {
        if (!watching.aborted) throw e;
      }
      expect(added).not.toContain('deleted-values');
      // The bundle cache holds verification results only: no archive, nothing half-written.
      const cacheDir = join(h.workDir, 'bundle-cache');
      expect((await readdir(cacheDir)).filter((n) => !/^[0-9a-f]{64}\.json$/.test(n))).toEqual([]);
    } finally {
      h.sim.configure({ faults: [] });
    }
  });

  it('in steady state makes no admin API call and no write', async () => {
    await until(
      'site',
      'Ready and idle',
      (x) => readyOf(x)?.status === 'True' && Boolean(x.status?.export?.finishedAt),
    );
    const requests = h.sim.requests.length;
    const rv = (await getRelease('site')).metadata.resourceVersion;
    const valuesRv = (await valuesOf('site')).resourceVersion;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(h.sim.requests.length).toBe(requests);
    expect((await getRelease('site')).metadata.resourceVersion).toBe(rv);
    expect((await valuesOf('site')).resourceVersion).toBe(valuesRv);
  });

  it('reports when each link expires and admin API calls on /metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${h.operator.metricsPort}/metrics`)).text();
    const expiry = new RegExp(
      `static_export_release_link_expiration_timestamp_seconds\\{namespace="${h.ns}",name="site"\\} (\\d+(\\.\\d+)?)`,
    ).exec(text);
    expect(Number(expiry?.[1]) - Date.now() / 1000).toBeGreaterThan(60);
    expect(text).toMatch(
      /static_export_admin_api_requests_total\{endpoint="POST \/v1\/static-export\/jobs",code="202"\} [1-9]/,
    );
    expect(text).toMatch(
      /static_export_reconcile_total\{controller="staticexportrelease",result="[a-z]+"\} [1-9]/,
    );
    expect(text).not.toContain(h.sim.adminKey);
  });

  it('never puts the key or a bundle link in status, events or logs', async () => {
    const everything = [
      await kubectlOk(['get', 'ser', '-n', h.ns, '-o', 'json']),
      await kubectlOk(['get', 'events.events.k8s.io', '-n', h.ns, '-o', 'json']),
      h.logs.join('\n'),
    ].join('\n');
    expect(h.logs.length).toBeGreaterThan(10);
    expect(everything).not.toContain(h.sim.adminKey);
    expect(everything).not.toMatch(/\/bundles\/[^\s"]*\?/);
    expect(everything).not.toMatch(/sig=/);
  });
});
