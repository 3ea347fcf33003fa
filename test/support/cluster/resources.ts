// The resources tests apply, built one way: a StaticExportRelease or AgentJob with the usual
// defaults (credentials in the `admin-key` Secret, values in `<name>-values`), and their getters.
import { stringify } from 'yaml';
import type { AgentJob, StaticExportRelease } from '../../../src/crd/index.ts';
import { eventsFor, eventually, kubectlOk } from './kube.ts';

export const ADMIN_KEY_SECRET = 'admin-key';

const apply = (obj: unknown) => kubectlOk(['apply', '-f', '-'], stringify(obj));

/** Any new value asks the operator for an export now (and a fresh look at its target). */
export const requestExport = (namespace: string, name: string, value = new Date().toISOString()) =>
  kubectlOk([
    'annotate',
    'ser',
    name,
    '-n',
    namespace,
    '--overwrite',
    `staticexport.dev/requested-at=${value}`,
  ]);

export function applySecret(namespace: string, name: string, data: Record<string, string>): Promise<string> {
  return apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData: data });
}

export function applyRelease(
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
  annotations?: Record<string, string>,
): Promise<string> {
  return apply({
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec: {
      domain: 'docs.example.com',
      credentialsSecretRef: { name: ADMIN_KEY_SECRET },
      target: { valuesSecret: { name: `${name}-values` } },
      ...spec,
    },
  });
}

export function applyAgentJob(
  namespace: string,
  name: string,
  projectId: string,
  prompt: string,
  secretName = ADMIN_KEY_SECRET,
): Promise<string> {
  return apply({
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'AgentJob',
    metadata: { name, namespace },
    spec: { projectId, prompt, credentialsSecretRef: { name: secretName } },
  });
}

export async function getRelease(namespace: string, name: string): Promise<StaticExportRelease> {
  return JSON.parse(
    await kubectlOk(['get', 'ser', name, '-n', namespace, '-o', 'json']),
  ) as StaticExportRelease;
}

export async function getAgentJob(namespace: string, name: string): Promise<AgentJob> {
  return JSON.parse(await kubectlOk(['get', 'aj', name, '-n', namespace, '-o', 'json'])) as AgentJob;
}

/**
 * Until `test` holds of the release; a timeout says what its status and events were last, which is
 * what a failing run needs to be read.
 */
export async function untilRelease(
  namespace: string,
  name: string,
  what: string,
  test: (r: StaticExportRelease) => boolean,
  ms = 60_000,
): Promise<StaticExportRelease> {
  let last: StaticExportRelease | undefined;
  try {
    return await eventually<StaticExportRelease>(
      `${name}: ${what}`,
      async () => {
        last = await getRelease(namespace, name);
        return test(last) ? last : undefined;
      },
      ms,
    );
  } catch (e) {
    const events = (await eventsFor(namespace, name)).map((ev) => `${ev.reason}: ${ev.note}`);
    throw new Error(
      `${(e as Error).message}; last status ${JSON.stringify(last?.status)}; events ${JSON.stringify(events)}`,
    );
  }
}
