// Test helpers that drive the cluster the way a user does: the real kubectl binary.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { parse, stringify } from 'yaml';
import { tempDir } from '../temp.ts';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const KUBECTL = join(ROOT, '.tools', 'bin', 'kubectl');
export const HELM = join(ROOT, '.tools', 'bin', 'helm');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function run(
  bin: string,
  args: string[],
  input?: string,
  env?: NodeJS.ProcessEnv,
): Promise<RunResult> {
  const child = promisify(execFile)(bin, args, { maxBuffer: 16 << 20, env: { ...process.env, ...env } });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof err.code === 'number' ? err.code : 1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    };
  }
}

export function kubeconfig(): string {
  return inject('kubeconfig');
}

/** A kubeconfig for the test cluster that authenticates with `token` (a service account's, from `kubectl create token`). */
export function tokenKubeconfig(token: string): string {
  const admin = parse(readFileSync(kubeconfig(), 'utf8')) as {
    clusters: { name: string; cluster: Record<string, unknown> }[];
  };
  const cluster = admin.clusters[0];
  const file = join(tempDir('sa-kubeconfig-'), 'kubeconfig');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name: 'service-account', user: { token } }],
      contexts: [{ name: 'service-account', context: { cluster: cluster?.name, user: 'service-account' } }],
      'current-context': 'service-account',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** kubectl against the test cluster; resolves even on failure so tests can assert on stderr. */
export function kubectl(args: string[], input?: string): Promise<RunResult> {
  return run(KUBECTL, ['--kubeconfig', kubeconfig(), ...args], input);
}

/** kubectl that must succeed. */
export async function kubectlOk(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await kubectlOk(['create', 'namespace', name]);
  return name;
}

/**
 * Whether the API server serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies (1.30+):
 * below, the operator chart installs only with admissionPolicy.enabled false.
 */
export async function hasAdmissionPolicies(): Promise<boolean> {
  const v1 = await kubectl(['get', '--raw', '/apis/admissionregistration.k8s.io/v1']);
  return v1.stdout.includes('"validatingadmissionpolicies"');
}

export async function installCrds(): Promise<void> {
  await kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', join(ROOT, 'crds')]);
  // A CRD created a moment ago may have no status yet, and kubectl wait then fails at once
  // (".status.conditions accessor error") instead of waiting: asked again until it waits.
  await eventually('the CRDs established', async () => {
    const r = await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      '-f',
      join(ROOT, 'crds'),
    ]);
    if (r.code !== 0 && !r.stderr.includes('accessor error')) throw new Error(r.stderr);
    return r.code === 0;
  });
}

export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

export interface EventSeen {
  type: string;
  reason: string;
  note: string;
}

/** events.k8s.io Events about one object, as `kubectl get events` would list them. */
export async function eventsFor(namespace: string, name: string): Promise<EventSeen[]> {
  const out = await kubectlOk([
    'get',
    'events.events.k8s.io',
    '-n',
    namespace,
    '--field-selector',
    `regarding.name=${name}`,
    '-o',
    'json',
  ]);
  return (JSON.parse(out) as { items: EventSeen[] }).items;
}
