// Choosing the Kubernetes version of the test control plane: versions.env names the default and the
// oldest the charts claim, STATIC_EXPORT_TEST_KUBE_VERSION selects one for a run, build.sh refuses
// what it cannot build, and the real node refuses to join a control plane of another version. No
// control plane is started.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ControlPlane } from '../../../scripts/control-plane/control-plane.ts';
import {
  kubeVersions,
  parseVersionsEnv,
  TEST_KUBE_VERSION_ENV,
  testKubeVersion,
} from '../../../scripts/control-plane/kube-versions.ts';
import { nodePaths } from '../../../scripts/control-plane/node.ts';
import { runProcess } from '../../../scripts/run-process.ts';
import { tempDir } from '../../support/temp.ts';

const { current, oldest } = kubeVersions();
const buildScript = join(import.meta.dirname, '../../../scripts/control-plane/build.sh');

describe('versions.env', () => {
  it('names the default version and an older one the charts claim', () => {
    const minor = (v: string) => Number(v.split('.')[1]);
    expect(minor(oldest)).toBeLessThan(minor(current));
  });

  it('refuses a version that is not a release, naming the variable', () => {
    expect(() => parseVersionsEnv('KUBERNETES_VERSION=v1.35.4\nKUBERNETES_OLDEST_VERSION=1.27\n')).toThrow(
      'versions.env: KUBERNETES_OLDEST_VERSION must be a Kubernetes release such as v1.35.4, not "1.27"',
    );
    expect(() => parseVersionsEnv('KUBERNETES_OLDEST_VERSION=v1.27.16\n')).toThrow(
      'versions.env: KUBERNETES_VERSION must be',
    );
  });
});

describe(TEST_KUBE_VERSION_ENV, () => {
  it('selects the version when set, the default when unset or empty', () => {
    expect(testKubeVersion({ [TEST_KUBE_VERSION_ENV]: oldest })).toBe(oldest);
    expect(testKubeVersion({})).toBeUndefined();
    expect(testKubeVersion({ [TEST_KUBE_VERSION_ENV]: '' })).toBeUndefined();
  });

  it('refuses a value that is not a release, with an example', () => {
    expect(() => testKubeVersion({ [TEST_KUBE_VERSION_ENV]: '1.27' })).toThrow(
      `${TEST_KUBE_VERSION_ENV} must be a Kubernetes release such as ${oldest} or ${current}, not "1.27"`,
    );
  });

  it('refuses to be combined with a cluster of the user’s own', () => {
    expect(() =>
      testKubeVersion({ [TEST_KUBE_VERSION_ENV]: oldest, STATIC_EXPORT_TEST_KUBECONFIG: '/kubeconfig' }),
    ).toThrow(/STATIC_EXPORT_TEST_KUBECONFIG names a cluster whose version is its own: unset one of them/);
  });
});

describe('build.sh arguments', () => {
  it('refuses a version that is not a release before building anything', async () => {
    const r = await runProcess('bash', [buildScript, '--kubernetes', '1.27']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `build.sh: --kubernetes must be a Kubernetes release such as ${current}, not '1.27'`,
    );
  });

  it('refuses an unknown argument with its usage', async () => {
    const r = await runProcess('bash', [buildScript, '--kube', oldest]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "build.sh: unknown argument '--kube' (usage: build.sh [node] [--kubernetes vX.Y.Z])",
    );
  });
});

describe('the real node', () => {
  it('refuses to join a control plane of another version, before touching the host', async () => {
    const dir = tempDir('cp-');
    const state = {
      binDir: '/nonexistent',
      kubeVersion: oldest,
      ports: { etcd: 1, etcdPeer: 2, apiserver: 3 },
      pids: {},
    };
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
    await expect(ControlPlane.attach(dir).startNode()).rejects.toThrow(
      `the real node runs only beside a ${current} control plane, and this one is ${oldest}: ` +
        `unset ${TEST_KUBE_VERSION_ENV} for the tests that run pods`,
    );
    expect(existsSync(nodePaths(dir).root)).toBe(false);
  });
});
