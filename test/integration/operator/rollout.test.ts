// The operator re-rolls what serves a release, on the real control plane: the site chart installed
// by real Helm 4 and Helm 3 in existing-Secret mode next to a StaticExportRelease, the real
// Deployment controller making ReplicaSets, kwok making their pods Ready.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventsFor, eventually, kubeconfig, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease, requestExport } from '../../support/cluster/resources.ts';
import { CHART_DIR, type HelmName, helm, valuesFile } from '../../support/tools/chart.ts';

const VERSION = 'staticexport.dev/version';
const RENEWED_AT = 'staticexport.dev/renewed-at';

const h = useOperatorSuite({ namespaces: ['rollout'], editableDocs: true, sim: { exportDurationMs: 300 } });

interface Deployment {
  metadata: { name: string; generation: number; labels?: Record<string, string> };
  spec: { template: { metadata: { annotations?: Record<string, string> } } };
  status?: { observedGeneration?: number };
}

const deployment = async (name: string) =>
  JSON.parse(await kubectlOk(['get', 'deployment', name, '-n', h.ns, '-o', 'json'])) as Deployment;
const annotationsOf = (d: Deployment) => d.spec.template.metadata.annotations ?? {};

/** The ReplicaSets of a Deployment, by the version annotation their pods carry. */
async function replicaSets(deploymentName: string) {
  const list = JSON.parse(await kubectlOk(['get', 'rs', '-n', h.ns, '-o', 'json'])) as {
    items: (Deployment & { metadata: { ownerReferences?: { name: string }[] } })[];
  };
  return list.items
    .filter((rs) => rs.metadata.ownerReferences?.some((o) => o.name === deploymentName))
    .map((rs) => ({ name: rs.metadata.name, annotations: annotationsOf(rs) }));
}

const conditionOf = (r: StaticExportRelease, type: string) =>
  r.status?.conditions?.find((c) => c.type === type);
const readyOf = (r: StaticExportRelease) => conditionOf(r, 'Ready');

async function until(name: string, what: string, test: (r: StaticExportRelease) => boolean, ms = 60_000) {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const r = await getRelease(h.ns, name);
      return test(r) ? r : undefined;
    },
    ms,
  );
}

const trigger = (name: string, value: string) => requestExport(h.ns, name, value);

async function helmInstall(bin: HelmName, release: string, values: object, verb = 'install') {
  const r = await helm(bin, [
    verb,
    release,
    CHART_DIR,
    '--kubeconfig',
    kubeconfig(),
    '--namespace',
    h.ns,
    '-f',
    await valuesFile(values),
  ]);
  expect(r.code, r.stderr).toBe(0);
}

/** A plain Deployment (not the chart's), optionally labelled as reading a values Secret. */
function applyDeployment(
  name: string,
  opts: { valuesSecret?: string; nodeSelector?: Record<string, string> },
) {
  return kubectlOk(
    ['apply', '-f', '-'],
    stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace: h.ns,
        ...(opts.valuesSecret ? { labels: { 'staticexport.dev/values-secret': opts.valuesSecret } } : {}),
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [{ name: 'web', image: 'nginx' }],
            ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
          },
        },
      },
    }),
  );
}

describe('watching workloads', () => {
  it('the operator is ready with no labelled Deployment or StatefulSet in its namespaces yet', async () => {
    // An empty metadata-only list comes back with items: null; its informer must still sync.
    await eventually(
      'operator /readyz 200',
      async () => (await fetch(`http://127.0.0.1:${h.operator.metricsPort}/readyz`)).status === 200,
      15_000,
    );
  });
});

describe('re-rolling the site chart', () => {
  const siteValues = { staticExport: { enabled: true, existingSecret: 'site-values' }, replicaCount: 2 };
  const helm4 = 'docs-static-export-site';
  const helm3 = 'docs3-static-export-site';

  it('rolls the chart Deployments (Helm 4 and Helm 3) to the published version, and again for changed docs only', async () => {
    await helmInstall('helm4', 'docs', siteValues);
    await helmInstall('helm3', 'docs3', siteValues);
    await applyRelease(h.ns, 'site');
    const first = await until('site', 'Ready', (r) => readyOf(r)?.status === 'True');
    const v1 = first.status?.current?.version ?? '';

    // The Secret the chart reads holds what its pods need, under the keys the chart reads.
    const secret = JSON.parse(
      await kubectlOk(['get', 'secret', 'site-values', '-n', h.ns, '-o', 'json']),
    ) as {
      data: Record<string, string>;
    };
    expect(Buffer.from(secret.data.version ?? '', 'base64').toString()).toBe(v1);
    expect(Buffer.from(secret.data.bundleUrl ?? '', 'base64').toString()).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/bundles\//,
    );

    for (const name of [helm4, helm3]) {
      await eventually(
        `${name} carries ${v1}`,
        async () => annotationsOf(await deployment(name))[VERSION] === v1,
      );
    }
    const rolled = await until('site', 'rolled out', (r) => Boolean(r.status?.current?.rollout?.completedAt));
    expect(rolled.status?.current?.rollout).toMatchObject({
      version: v1,
      workloads: expect.arrayContaining([
        { kind: 'Deployment', name: helm4, generation: (await deployment(helm4)).metadata.generation },
        { kind: 'Deployment', name: helm3, generation: (await deployment(helm3)).metadata.generation },
      ]),
    });
    expect((await eventsFor(h.ns, 'site')).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['RollingOut', 'RolledOut']),
    );
    const generation = (await deployment(helm4)).metadata.generation;
    const replicaSetsBefore = (await replicaSets(helm4)).length;

    // Identical content: no roll.
    await trigger('site', 'same');
    await until(
      'site',
      'same content handled',
      (r) => r.status?.lastHandledRequestedAt === 'same' && Boolean(r.status?.export?.finishedAt),
    );
    expect((await deployment(helm4)).metadata.generation).toBe(generation);
    expect(await replicaSets(helm4)).toHaveLength(replicaSetsBefore);

    // Changed docs: a new version, a new ReplicaSet carrying it.
    writeFileSync(join(h.docsDir, 'rollout-page.md'), '# Rolled\n\nA page added by the rollout test.\n');
    await trigger('site', 'changed');
    const second = await until('site', 'new version', (r) => r.status?.current?.version !== v1);
    const v2 = second.status?.current?.version ?? '';
    for (const name of [helm4, helm3]) {
      await eventually(
        `${name} carries ${v2}`,
        async () => annotationsOf(await deployment(name))[VERSION] === v2,
      );
      await eventually(`a ReplicaSet of ${name} with ${v2}`, async () =>
        (await replicaSets(name)).some((rs) => rs.annotations[VERSION] === v2),
      );
    }
    await until('site', 'second rollout complete', (r) =>
      Boolean(r.status?.current?.rollout?.version === v2 && r.status.current.rollout.completedAt),
    );
  });

  it('a chart installed once the release is Ready is rolled to the served version at once, not at the next renewal', async () => {
    const served = (await getRelease(h.ns, 'site')).status?.current?.version;
    await helmInstall('helm4', 'late', siteValues);
    // Links live 600 s here: the next renewal is minutes away, the watch on labelled workloads is not.
    await eventually(
      'late-static-export-site carries the served version',
      async () => annotationsOf(await deployment('late-static-export-site'))[VERSION] === served,
      15_000,
    );
    const r = await helm('helm4', ['uninstall', 'late', '--kubeconfig', kubeconfig(), '-n', h.ns]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('helm upgrade with unchanged values keeps the operator annotation (Helm 4 and Helm 3)', async () => {
    const served = (await getRelease(h.ns, 'site')).status?.current?.version;
    const before: Record<string, number> = {
      [helm4]: (await deployment(helm4)).metadata.generation,
      [helm3]: (await deployment(helm3)).metadata.generation,
    };
    await helmInstall('helm4', 'docs', siteValues, 'upgrade');
    await helmInstall('helm3', 'docs3', siteValues, 'upgrade');
    for (const name of [helm4, helm3]) {
      const d = await deployment(name);
      expect(annotationsOf(d)[VERSION], name).toBe(served);
      expect(d.metadata.generation, name).toBe(before[name]);
    }
    // The operator alone owns the field (Helm never set it).
    const managed = JSON.parse(
      await kubectlOk(['get', 'deployment', helm4, '-n', h.ns, '-o', 'json', '--show-managed-fields']),
    ) as { metadata: { managedFields: { manager: string; fieldsV1?: object }[] } };
    const owners = managed.metadata.managedFields
      .filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes(`f:${VERSION}`))
      .map((f) => f.manager);
    expect(owners).toEqual(['static-export-operator']);
  });
});

describe('link renewal', () => {
  it('with onLinkRenewal Rollout a renewal rolls (renewed-at); with None (the default) it only rewrites the Secret', async () => {
    await applyDeployment('renew-rollout', { valuesSecret: 'renew-rollout-values' });
    await applyDeployment('renew-none', { valuesSecret: 'renew-none-values' });
    // Links live 600 s in this simulator: renewed 10 s after each publish.
    await applyRelease(h.ns, 'renew-rollout', { renewBefore: '590s', rollout: { onLinkRenewal: 'Rollout' } });
    await applyRelease(h.ns, 'renew-none', { renewBefore: '590s' });
    for (const name of ['renew-rollout', 'renew-none'])
      await until(name, 'renewed', (r) => Boolean(r.status?.current?.renewedAt), 60_000);

    const rolling = await until('renew-rollout', 'renewal rolled out', (r) =>
      Boolean(r.status?.current?.rollout?.renewedAt),
    );
    const renewedAt = rolling.status?.current?.rollout?.renewedAt;
    await eventually('renew-rollout carries renewed-at', async () => {
      const a = annotationsOf(await deployment('renew-rollout'));
      return a[RENEWED_AT] !== undefined && a[VERSION] === rolling.status?.current?.version;
    });
    expect((await eventsFor(h.ns, 'renew-rollout')).map((e) => e.note)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Rolling Deployment\/renew-rollout for the link renewed at /),
      ]),
    );
    expect(renewedAt).toBeDefined();

    const none = await getRelease(h.ns, 'renew-none');
    const noneDeployment = await deployment('renew-none');
    expect(annotationsOf(noneDeployment)[VERSION]).toBe(none.status?.current?.version);
    expect(annotationsOf(noneDeployment)[RENEWED_AT]).toBeUndefined();
    expect(none.status?.current?.rollout?.renewedAt).toBeUndefined();
    expect((await eventsFor(h.ns, 'renew-none')).map((e) => e.reason)).toContain('LinkRenewed');
    for (const name of ['renew-rollout', 'renew-none']) await kubectlOk(['delete', 'ser', name, '-n', h.ns]);
  });
});

describe('a rollout that cannot complete', () => {
  it('is reported: Ready=False RolloutStalled naming the workload, a Warning event', async () => {
    // Its pods can never be scheduled: no node has this label.
    await applyDeployment('stuck', { nodeSelector: { 'staticexport.dev/test': 'no-such-node' } });
    await applyRelease(h.ns, 'stuck', {
      rollout: { workloadRefs: [{ kind: 'Deployment', name: 'stuck' }], timeout: '3s' },
    });
    const stalled = await until('stuck', 'RolloutStalled', (r) => readyOf(r)?.reason === 'RolloutStalled');
    expect(readyOf(stalled)).toMatchObject({ status: 'False' });
    // kstatus reads it as Failed, Argo CD as Degraded: Stalled=True, nothing Reconciling.
    expect(conditionOf(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'RolloutStalled' });
    expect(conditionOf(stalled, 'Reconciling')).toBeUndefined();
    expect(readyOf(stalled)?.message).toMatch(
      /^Published sha256-[0-9a-f]{64}, but its rollout does not complete: Deployment\/stuck \(.*\) not rolled out within spec.rollout.timeout 3s/,
    );
    expect(annotationsOf(await deployment('stuck'))[VERSION]).toBe(stalled.status?.current?.version);
    expect((await eventsFor(h.ns, 'stuck')).filter((e) => e.reason === 'RolloutStalled')).toHaveLength(1);

    // Fixed (the pods can run): the rollout completes and the release is Ready again.
    await kubectlOk([
      'patch',
      'deployment',
      'stuck',
      '-n',
      h.ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]',
    ]);
    const fixed = await until('stuck', 'Ready again', (r) => readyOf(r)?.status === 'True', 90_000);
    expect(conditionOf(fixed, 'Stalled')).toBeUndefined();
  });
});

describe('spec.rollout.workloadRefs', () => {
  it('a workloadRef added to a served release is rolled to the served version at once', async () => {
    await applyDeployment('plain', {});
    await applyRelease(h.ns, 'refs');
    const served = await until('refs', 'Ready', (r) => readyOf(r)?.status === 'True');
    await applyRelease(h.ns, 'refs', { rollout: { workloadRefs: [{ kind: 'Deployment', name: 'plain' }] } });
    // Links live 600 s here: not at the next renewal, but right after the spec change's export.
    await eventually(
      'plain carries the served version',
      async () => annotationsOf(await deployment('plain'))[VERSION] === served.status?.current?.version,
      20_000,
    );
  });

  it('a workloadRef to a Deployment that does not exist is reported', async () => {
    await applyRelease(h.ns, 'missing', {
      rollout: { workloadRefs: [{ kind: 'Deployment', name: 'nowhere' }] },
    });
    const r = await until('missing', 'WorkloadNotFound', (x) => readyOf(x)?.reason === 'WorkloadNotFound');
    expect(readyOf(r)?.message).toBe(
      `spec.rollout.workloadRefs names Deployment/nowhere, not found in namespace ${h.ns}: create it or remove the reference`,
    );
  });
});
