// The values Secret target never takes over a Secret it does not own, not even one created or
// taken by someone else between the operator's look and its write. Real API server.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { type KubeClient, resourcePath } from '../../../src/runtime/kube-client.ts';
import { TargetError, writeValuesSecret } from '../../../src/targets/values-secret.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, applySecret, getRelease } from '../../support/cluster/resources.ts';

// No operator watches this namespace: the tests write the Secrets themselves.
const suite = useOperatorSuite({ namespaces: ['values'], sim: false, kubeClient: true });

interface SecretSeen {
  metadata: { resourceVersion: string; labels?: Record<string, string>; ownerReferences?: unknown[] };
  data?: Record<string, string>;
}
const getSecret = async (name: string) =>
  JSON.parse(await kubectlOk(['get', 'secret', name, '-n', suite.ns, '-o', 'json'])) as SecretSeen;

const values = {
  bundleUrl: 'https://bundles.example.com/b.tar.gz?sig=x',
  version: `sha256-${'1'.repeat(64)}`,
};

/** A client that lets `meanwhile` run right after the operator looked at Secret `name`. */
function racing(name: string, meanwhile: () => Promise<unknown>): KubeClient {
  const client = Object.create(suite.kube) as KubeClient;
  let raced = false;
  client.get = async <T>(path: string, signal?: AbortSignal): Promise<T> => {
    try {
      return await suite.kube.get<T>(path, signal);
    } finally {
      if (!raced && path === resourcePath('v1', 'secrets', suite.ns, name)) {
        raced = true;
        await meanwhile();
      }
    }
  };
  return client;
}

/** A release object for direct writes (no operator watches this namespace). */
async function release(name: string): Promise<StaticExportRelease> {
  await applyRelease(suite.ns, name, { suspend: true });
  return getRelease(suite.ns, name);
}

describe('values Secret ownership', () => {
  it('one created by someone else between the look and the write is not taken over', async () => {
    const r = await release('created-meanwhile');
    const target = { name: 'created-meanwhile-values', key: 'values.yaml' };
    const theirs = racing(target.name, () =>
      applySecret(suite.ns, target.name, { 'values.yaml': 'theirs: true' }),
    );
    const refused = await writeValuesSecret(theirs, r, target, values).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TargetError);
    expect((refused as Error).message).toContain(
      `Secret ${suite.ns}/${target.name} exists and is not managed`,
    );
    const s = await getSecret(target.name);
    expect(s.metadata.ownerReferences).toBeUndefined();
    expect(Buffer.from(s.data?.['values.yaml'] ?? '', 'base64').toString()).toBe('theirs: true');
  });

  it('ours, edited by someone else between the look and the write: looked at again and written, their label kept', async () => {
    const r = await release('edited-meanwhile');
    const target = { name: 'edited-meanwhile-values', key: 'values.yaml' };
    expect(await writeValuesSecret(suite.kube, r, target, values)).toBe(true);
    const edit = racing(target.name, () =>
      kubectlOk(['label', 'secret', target.name, '-n', suite.ns, 'team=docs']),
    );
    const next = { ...values, version: `sha256-${'2'.repeat(64)}` };
    expect(await writeValuesSecret(edit, r, target, next)).toBe(true);
    const s = await getSecret(target.name);
    expect(s.metadata.labels?.team).toBe('docs');
    expect(Buffer.from(s.data?.['values.yaml'] ?? '', 'base64').toString()).toContain(next.version);
  });

  it('ours, taken by someone else between the look and the write: refused', async () => {
    const r = await release('taken-meanwhile');
    const target = { name: 'taken-meanwhile-values', key: 'values.yaml' };
    expect(await writeValuesSecret(suite.kube, r, target, values)).toBe(true);
    const take = racing(target.name, () =>
      kubectlOk([
        ...['patch', 'secret', target.name, '-n', suite.ns, '--type=json'],
        ...['-p', '[{"op":"remove","path":"/metadata/ownerReferences"}]'],
      ]),
    );
    const next = { ...values, version: `sha256-${'2'.repeat(64)}` };
    await expect(writeValuesSecret(take, r, target, next)).rejects.toBeInstanceOf(TargetError);
    const s = await getSecret(target.name);
    expect(Buffer.from(s.data?.['values.yaml'] ?? '', 'base64').toString()).toContain(values.version);
  });
});

describe('values Secret ownership, through the operator', () => {
  const h = useOperatorSuite({ namespaces: ['values-op'] });

  it('the operator reports TargetFailed for a Secret of that name it does not own, and leaves it alone', async () => {
    await applySecret(h.ns, 'theirs-values', { 'values.yaml': 'theirs: true' });
    const before = JSON.parse(
      await kubectlOk(['get', 'secret', 'theirs-values', '-n', h.ns, '-o', 'json']),
    ) as SecretSeen;
    await applyRelease(h.ns, 'theirs');
    const ready = await eventually('TargetFailed', async () => {
      const c = (await getRelease(h.ns, 'theirs')).status?.conditions?.find((x) => x.type === 'Ready');
      return c?.reason === 'TargetFailed' ? c : undefined;
    });
    expect(ready.message).toContain(`Secret ${h.ns}/theirs-values exists and is not managed`);
    const after = JSON.parse(
      await kubectlOk(['get', 'secret', 'theirs-values', '-n', h.ns, '-o', 'json']),
    ) as SecretSeen;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});
