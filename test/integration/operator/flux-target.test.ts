// spec.target.fluxHelmRelease against Flux's real HelmRelease v2 CRD (helm-controller's own
// generated schema): the examples under examples/flux are applied as they are, and the test
// asserts exactly what the operator changed on each object and that the presigned link is in the
// values Secret and nowhere else.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectl, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { getRelease, requestExport, untilRelease } from '../../support/cluster/resources.ts';
import {
  applyObjects,
  decode,
  example,
  getObject,
  type KubeDoc,
  linkNowhereIn,
  readyOf,
  withoutVolatile,
} from '../../support/tools/gitops.ts';

const h = useOperatorSuite({
  namespaces: ['flux'],
  gitopsCrds: ['helmRelease'],
  editableDocs: true,
  sim: { exportDurationMs: 300 },
  adminKeySecret: 'docs-admin-key',
});

const OPERATOR = 'static-export-operator';

const get = (kind: string, name: string, namespace = h.ns) => getObject(kind, name, namespace);
const until = (name: string, what: string, test: (r: StaticExportRelease) => boolean, ms?: number) =>
  untilRelease(h.ns, name, what, test, ms);

describe('the fluxHelmRelease target, on the real HelmRelease v2 schema', () => {
  let link = '';

  it('writes the values Secret and the version ConfigMap, and only requestedAt on the HelmRelease', async () => {
    const objects = example('flux/helmrelease.yaml', { docs: h.ns });
    await applyObjects(objects);
    const before = await get('helmrelease', 'docs');
    await applyObjects(example('flux/static-export-release.yaml', { docs: h.ns }));
    const r = await until(
      'docs',
      'Ready',
      (x) => readyOf(x)?.status === 'True' && !!x.status?.current?.version,
    );
    const version = r.status?.current?.version ?? '';

    const secret = await get('secret', 'docs-values');
    link = decode(secret.data?.bundleUrl);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.+\?.+/);
    expect(decode(secret.data?.version)).toBe(version);
    expect(secret.metadata.labels?.['reconcile.fluxcd.io/watch']).toBe('Enabled');
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ name: 'docs', controller: true }),
    ]);

    const cm = await get('configmap', 'docs-version');
    expect(cm.data).toEqual({ version });
    expect(cm.metadata.labels?.['reconcile.fluxcd.io/watch']).toBe('Enabled');
    expect(cm.metadata.ownerReferences).toEqual([
      expect.objectContaining({ name: 'docs', controller: true }),
    ]);

    const after = await get('helmrelease', 'docs');
    // Spec untouched (same generation), and of the metadata only the one annotation.
    expect(withoutVolatile(after, ['annotations'])).toEqual(withoutVolatile(before, ['annotations']));
    const requestedAt = after.metadata.annotations?.['reconcile.fluxcd.io/requestedAt'] ?? '';
    expect(Date.parse(requestedAt)).not.toBeNaN();
    // Recorded with the version, so a request that failed is made again at the next write.
    expect(cm.metadata.annotations?.['staticexport.dev/reconcile-requested-at']).toBe(requestedAt);
    const { 'reconcile.fluxcd.io/requestedAt': _, ...others } = after.metadata.annotations ?? {};
    expect(others).toEqual(before.metadata.annotations ?? {});
    expect(after.metadata.managedFields?.filter((m) => m.manager === OPERATOR)).toEqual([
      expect.objectContaining({
        operation: 'Update',
        fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:reconcile.fluxcd.io/requestedAt': {} } } },
      }),
    ]);
  });

  it('puts the link nowhere but the Secret: not the HelmRelease, the ConfigMap, events, status or logs', async () => {
    expect(link).not.toBe('');
    linkNowhereIn(link, {
      helmRelease: JSON.stringify(await get('helmrelease', 'docs')),
      configMap: JSON.stringify(await get('configmap', 'docs-version')),
      release: JSON.stringify(await getRelease(h.ns, 'docs')),
      events: await kubectlOk(['get', 'events.events.k8s.io', '-n', h.ns, '-o', 'json']),
      logs: h.logs.join('\n'),
    });
  });

  it('new content: the ConfigMap gets the new version and the HelmRelease a new requestedAt, its spec still untouched', async () => {
    const before = await get('helmrelease', 'docs');
    const served = (await getRelease(h.ns, 'docs')).status?.current?.version;
    writeFileSync(join(h.docsDir, 'news.md'), '# News\n\nA page that was not there before.\n');
    await requestExport(h.ns, 'docs', 'new');
    const r = await until(
      'docs',
      'a new version',
      (x) => !!x.status?.current?.version && x.status.current.version !== served,
    );
    const version = r.status?.current?.version;
    expect((await get('configmap', 'docs-version')).data).toEqual({ version });
    expect(decode((await get('secret', 'docs-values')).data?.version)).toBe(version);
    const after = await get('helmrelease', 'docs');
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata.annotations?.['reconcile.fluxcd.io/requestedAt']).not.toBe(
      before.metadata.annotations?.['reconcile.fluxcd.io/requestedAt'],
    );
  });

  it('a ConfigMap edited by someone else is written back', async () => {
    const served = (await getRelease(h.ns, 'docs')).status?.current?.version;
    await kubectlOk([
      'patch',
      'configmap',
      'docs-version',
      '-n',
      h.ns,
      '-p',
      '{"data":{"version":"edited"}}',
    ]);
    // The ConfigMap is not watched: the next reconcile (here a trigger) finds it and repairs it.
    await requestExport(h.ns, 'docs', 'repair');
    await eventually(
      'version written back',
      async () => (await get('configmap', 'docs-version')).data?.version === served,
    );
  });
});

describe('a HelmRelease that cannot serve what the operator writes', () => {
  const release = (name: string, helmRelease: string): KubeDoc => {
    const [r] = example('flux/static-export-release.yaml', { docs: h.ns });
    return {
      ...(r as KubeDoc),
      metadata: { name, namespace: h.ns },
      spec: {
        ...((r as KubeDoc).spec as object),
        target: { fluxHelmRelease: { name: helmRelease } },
      },
    };
  };
  const misconfigured = (name: string, text: string) =>
    until(name, `TargetMisconfigured: ${text}`, (x) => {
      const c = readyOf(x);
      return c?.status === 'False' && c.reason === 'TargetMisconfigured' && (c.message ?? '').includes(text);
    });

  it('missing: Ready=False TargetMisconfigured with the snippet to add; nothing written, nothing exported', async () => {
    const started = h.sim.exportJobsStarted();
    await applyObjects([release('lonely', 'lonely-site')]);
    const r = await misconfigured('lonely', 'does not exist');
    const message = readyOf(r)?.message ?? '';
    expect(message).toContain(`HelmRelease ${h.ns}/lonely-site (helm.toolkit.fluxcd.io/v2) does not exist`);
    // The defaults: <release>-values and <release>-version.
    expect(message).toContain(
      [
        'values:',
        '  staticExport:',
        '    enabled: true',
        '    existingSecret: lonely-values',
        'valuesFrom:',
        '  - kind: ConfigMap',
        '    name: lonely-version',
        '    valuesKey: version',
        '    targetPath: staticExport.version',
      ].join('\n'),
    );
    expect(r.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    expect(await kubectl(['get', 'secret', 'lonely-values', '-n', h.ns])).toMatchObject({ code: 1 });
    expect(await kubectl(['get', 'configmap', 'lonely-version', '-n', h.ns])).toMatchObject({ code: 1 });
    expect(h.sim.exportJobsStarted()).toBe(started);
  });

  it('not reading the ConfigMap: the message says what is missing; once fixed, the release serves', async () => {
    const [hr] = example('flux/helmrelease.yaml', { docs: h.ns });
    const spec = (hr as KubeDoc).spec as Record<string, unknown>;
    const { valuesFrom: _, ...withoutValuesFrom } = spec;
    await applyObjects([{ ...hr, metadata: { name: 'half', namespace: h.ns }, spec: withoutValuesFrom }]);
    await applyObjects([release('half', 'half')]);
    const r = await misconfigured('half', 'spec.valuesFrom has no entry');
    expect(readyOf(r)?.message).toContain(
      `spec.values.staticExport.existingSecret is not half-values; spec.valuesFrom has no entry reading key version of ConfigMap half-version into staticExport.version`,
    );
    const fixed = {
      ...hr,
      metadata: { name: 'half', namespace: h.ns },
      spec: {
        ...spec,
        values: { staticExport: { enabled: true, existingSecret: 'half-values' } },
        valuesFrom: [
          {
            kind: 'ConfigMap',
            name: 'half-version',
            valuesKey: 'version',
            targetPath: 'staticExport.version',
          },
        ],
      },
    };
    await kubectlOk(
      ['replace', '-f', '-'],
      JSON.stringify({
        ...fixed,
        metadata: {
          ...fixed.metadata,
          resourceVersion: (await get('helmrelease', 'half')).metadata.resourceVersion,
        },
      }),
    );
    // Looked at again within 30 s (HelmReleases are not watched).
    const ok = await until('half', 'Ready', (x) => readyOf(x)?.status === 'True', 60_000);
    expect((await get('configmap', 'half-version')).data).toEqual({ version: ok.status?.current?.version });
  });
});
