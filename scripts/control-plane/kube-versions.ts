// The Kubernetes versions the test control planes are built at, as versions.env (which build.sh
// sources) names them: the one every test runs against, and the oldest the charts claim
// (kubeVersion), which CI also runs the CRD, operator-chart and release tests against.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KubeVersions {
  /** KUBERNETES_VERSION: the control plane (and the real node) of every test run. */
  current: string;
  /** KUBERNETES_OLDEST_VERSION: the oldest release the charts' kubeVersion admits, tested too. */
  oldest: string;
}

/** Selects the version of the test suite's own control plane (default: KUBERNETES_VERSION). */
export const TEST_KUBE_VERSION_ENV = 'STATIC_EXPORT_TEST_KUBE_VERSION';

const RELEASE = /^v1\.\d+\.\d+$/;

export function kubeVersions(): KubeVersions {
  return parseVersionsEnv(readFileSync(join(import.meta.dirname, 'versions.env'), 'utf8'));
}

export function parseVersionsEnv(text: string): KubeVersions {
  const read = (name: string): string => {
    const value = new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
    if (!RELEASE.test(value))
      throw new Error(`versions.env: ${name} must be a Kubernetes release such as v1.35.4, not "${value}"`);
    return value;
  };
  return { current: read('KUBERNETES_VERSION'), oldest: read('KUBERNETES_OLDEST_VERSION') };
}

/**
 * The Kubernetes version STATIC_EXPORT_TEST_KUBE_VERSION asks the suite's control plane to run, or
 * undefined for the default; a value build.sh cannot build, or one beside a cluster of the user's own
 * (whose version is its own), is refused with what to set instead.
 */
export function testKubeVersion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[TEST_KUBE_VERSION_ENV];
  if (value === undefined || value === '') return undefined;
  const { current, oldest } = kubeVersions();
  if (!RELEASE.test(value))
    throw new Error(
      `${TEST_KUBE_VERSION_ENV} must be a Kubernetes release such as ${oldest} or ${current}, not "${value}"`,
    );
  if (env.STATIC_EXPORT_TEST_KUBECONFIG)
    throw new Error(
      `${TEST_KUBE_VERSION_ENV} selects the version of the suite's own control plane; ` +
        'STATIC_EXPORT_TEST_KUBECONFIG names a cluster whose version is its own: unset one of them',
    );
  return value;
}
