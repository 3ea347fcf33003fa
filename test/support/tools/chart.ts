// The site chart as tests use it: rendered by the real helm binaries, its init container's command
// run as a local process with the env Kubernetes would give it, its nginx config run by real nginx
// (scripts/site-local.ts, which the demo serves with too).
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { stringify } from 'yaml';
import {
  type KubeObject,
  parseManifests,
  type RunningNginx,
  runInitContainer as runInitContainerIn,
  type SecretData,
  startNginx as startNginxIn,
} from '../../../scripts/site-local.ts';
import { kubeconfig } from '../cluster/kube.ts';

export {
  containerEnv,
  expandKubeVars,
  findObject,
  freePort,
  type KubeObject,
  NGINX,
  parseManifests,
  podSpec,
  type RunningNginx,
  type SecretData,
} from '../../../scripts/site-local.ts';

const run = promisify(execFile);

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CHART_DIR = join(ROOT, 'charts/static-export-site');
export const OPERATOR_CHART_DIR = join(ROOT, 'charts/static-export-operator');
export const SIMULATOR_CHART_DIR = join(ROOT, 'charts/static-export-simulator');
export const HELMS = {
  helm4: join(ROOT, '.tools/bin/helm'),
  helm3: join(ROOT, '.tools/helm3/helm'),
} as const;
export type HelmName = keyof typeof HELMS;

/** Every file these helpers write lives here and goes when the test file is done. */
const SCRATCH = mkdtempSync(join(tmpdir(), 'site-chart-'));
// nginx's workers run unprivileged (as in the pod) and must reach the site and temp paths in it.
chmodSync(SCRATCH, 0o755);
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** nginx processes still running; stopped when the test file is done, even after a failed test. */
const running = new Set<() => Promise<void>>();
afterAll(() => Promise.all([...running].map((stop) => stop())));

export function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(SCRATCH, prefix));
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function helm(name: HelmName, args: string[]): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(HELMS[name], args, {
      env: { PATH: process.env.PATH ?? '', HOME: SCRATCH },
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * `helm install` of `chart` as `release` into `namespace` of the suite's cluster, the values through
 * a file; `extra` follows (--wait, --timeout).
 */
export async function helmInstall(
  name: HelmName,
  o: { release: string; chart: string; namespace: string; values: object; extra?: string[] },
): Promise<HelmResult> {
  return helm(name, [
    'install',
    o.release,
    o.chart,
    '--kubeconfig',
    kubeconfig(),
    '--namespace',
    o.namespace,
    ...(o.extra ?? []),
    '-f',
    await valuesFile(o.values),
  ]);
}

/** Values go through a file (as users pass them with -f), never the command line. */
export async function valuesFile(values: object): Promise<string> {
  const dir = await scratchDir('values-');
  const file = join(dir, 'values.yaml');
  await writeFile(file, stringify(values), { mode: 0o600 });
  return file;
}

export async function helmTemplate(
  name: HelmName,
  values: object,
  release = 'docs',
  { chart = CHART_DIR, namespace = 'docs', extra = [] as string[] } = {},
): Promise<HelmResult & { objects: KubeObject[] }> {
  const result = await helm(name, [
    'template',
    release,
    chart,
    '--namespace',
    namespace,
    ...extra,
    '-f',
    await valuesFile(values),
  ]);
  const objects = result.code === 0 ? parseManifests(result.stdout) : [];
  return { ...result, objects };
}

export async function helmLint(name: HelmName, values: object, chart = CHART_DIR): Promise<HelmResult> {
  return helm(name, ['lint', '--strict', chart, '-f', await valuesFile(values)]);
}

export const A_VERSION = `sha256-${'ab'.repeat(32)}`;

/** The values a user of the inline mode passes (what `static-export export --values-out` writes). */
export function inlineValues(bundleUrl: string, extra: object = {}): object {
  return merge({ staticExport: { enabled: true, bundleUrl } }, extra);
}

export function merge(base: object, extra: object): object {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object'
        ? merge(current as object, value as object)
        : value;
  }
  return out;
}

export function renderedSecrets(objects: KubeObject[]): SecretData {
  const secrets: SecretData = {};
  for (const o of objects.filter((x) => x.kind === 'Secret')) {
    secrets[o.metadata.name] = Object.fromEntries(
      Object.entries((o.data ?? {}) as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString('utf8'),
      ]),
    );
  }
  return secrets;
}

/** The init container's rendered command as a local process (its files under this file's scratch dir). */
export async function runInitContainer(objects: KubeObject[], secrets: SecretData): Promise<HelmResult> {
  return runInitContainerIn(objects, secrets, await scratchDir('init-'));
}

/** Real nginx with the rendered config; stopped when the test file is done, even after a failed test. */
export async function startNginx(objects: KubeObject[], port: number): Promise<RunningNginx> {
  const dir = await scratchDir('serve-');
  await chmod(dir, 0o755);
  const nginx = await startNginxIn(objects, port, dir);
  const stop = async () => {
    running.delete(stop);
    await nginx.stop();
  };
  running.add(stop);
  return { ...nginx, stop };
}

/** The sample docs plus what a real export carries and the sample lacks: a 404 page, a hashed asset. */
export async function siteDocs(): Promise<string> {
  const dir = await scratchDir('docs-');
  await run('cp', ['-r', `${join(ROOT, 'sample-docs')}/.`, dir]);
  await writeFile(join(dir, '404.md'), '# Page not found\n\nThis page does not exist. [Home](/)\n');
  await mkdir(join(dir, 'assets'), { recursive: true });
  await writeFile(join(dir, 'assets/app.3f9a2c1b7d.js'), "console.log('hashed asset');\n");
  return dir;
}
