// The site chart as tests use it: rendered by the real helm binaries, its init container's command
// run as a local process with the env Kubernetes would give it, its nginx config run by real nginx.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';

const run = promisify(execFile);

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHART_DIR = join(ROOT, 'charts/static-export-site');
export const OPERATOR_CHART_DIR = join(ROOT, 'charts/static-export-operator');
export const HELMS = {
  helm4: join(ROOT, '.tools/bin/helm'),
  helm3: join(ROOT, '.tools/helm3/helm'),
} as const;
export type HelmName = keyof typeof HELMS;
export const NGINX = '/usr/sbin/nginx';

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

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are inspected field by field
  [field: string]: any;
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
  { chart = CHART_DIR, namespace = 'docs' } = {},
): Promise<HelmResult & { objects: KubeObject[] }> {
  const result = await helm(name, [
    'template',
    release,
    chart,
    '--namespace',
    namespace,
    '-f',
    await valuesFile(values),
  ]);
  const objects = result.code === 0 ? parseManifests(result.stdout) : [];
  return { ...result, objects };
}

export async function helmLint(name: HelmName, values: object, chart = CHART_DIR): Promise<HelmResult> {
  return helm(name, ['lint', '--strict', chart, '-f', await valuesFile(values)]);
}

export function parseManifests(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

export function findObject(objects: KubeObject[], kind: string): KubeObject {
  const found = objects.find((o) => o.kind === kind);
  if (!found) throw new Error(`no ${kind} rendered; got ${objects.map((o) => o.kind).join(', ')}`);
  return found;
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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Secret data by Secret name and key, as the kubelet resolves secretKeyRef. */
export type SecretData = Record<string, Record<string, string>>;

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

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}

/** The container's env the way the kubelet builds it; a missing Secret or key fails the pod. */
export function containerEnv(container: { env?: EnvVar[] }, secrets: SecretData): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of container.env ?? []) {
    const ref = v.valueFrom?.secretKeyRef;
    if (ref) {
      const value = secrets[ref.name]?.[ref.key];
      if (value === undefined) throw new Error(`secret ${ref.name} has no key ${ref.key}`);
      env[v.name] = value;
    } else {
      env[v.name] = v.value ?? '';
    }
  }
  return env;
}

/** Kubernetes' `$(VAR)` expansion in command and args (`$$` escapes, unknown names stay as written). */
export function expandKubeVars(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name?: string) =>
    name === undefined ? '$' : (env[name] ?? match),
  );
}

export function podSpec(objects: KubeObject[]) {
  return findObject(objects, 'Deployment').spec.template.spec;
}

/**
 * Runs the init container's rendered command as a local process: `static-export` is this
 * checkout's CLI (what the image puts on the PATH), the env is only what the chart gives it.
 */
export async function runInitContainer(objects: KubeObject[], secrets: SecretData): Promise<HelmResult> {
  const init = podSpec(objects).initContainers[0];
  const env = containerEnv(init, secrets);
  const [command, ...args] = (init.command as string[]).map((a) => expandKubeVars(a, env));
  if (command !== 'static-export') throw new Error(`unexpected init command ${command}`);
  const bin = await scratchDir('bin-');
  await writeFile(
    join(bin, 'static-export'),
    `#!/bin/sh\nexec "${join(ROOT, 'node_modules/.bin/node')}" "${join(ROOT, 'src/cli/main.ts')}" "$@"\n`,
    { mode: 0o755 },
  );
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...env, PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: SCRATCH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface RunningNginx {
  baseUrl: string;
  /** The container's text (a command or script) with its config and /tmp paths made local. */
  local(text: string): string;
  /** Resolves with nginx's exit code once it has exited. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Starts real nginx with the nginx container's rendered command and the ConfigMap's files. Only
 * the two container paths are mapped to local directories: the ConfigMap's mount and the /tmp
 * prefix. The site root and port come from the values the chart was rendered with.
 */
export async function startNginx(objects: KubeObject[], port: number): Promise<RunningNginx> {
  const pod = podSpec(objects);
  const container = pod.containers[0];
  const configMount = (container.volumeMounts as { name: string; mountPath: string }[]).find(
    (m) => m.name === 'nginx-config',
  )?.mountPath;
  if (!configMount) throw new Error('nginx container mounts no nginx-config volume');
  const work = await scratchDir('nginx-');
  // The master runs as root here and its workers as an unprivileged user, like the pod's nginx.
  await chmod(work, 0o755);
  const confDir = join(work, 'conf');
  const prefix = join(work, 'tmp/');
  await mkdir(confDir);
  await mkdir(prefix);
  const data = findObject(objects, 'ConfigMap').data as Record<string, string>;
  for (const [file, text] of Object.entries(data)) await writeFile(join(confDir, file), text);
  // One pass: the local directories are themselves under /tmp.
  const local = (text: string) =>
    text.replace(new RegExp(`${configMount}|/tmp/`, 'g'), (m) => (m === '/tmp/' ? prefix : confDir));
  const [command, ...args] = (container.command as string[]).map(local);
  if (command !== 'nginx') throw new Error(`unexpected serving command ${command}`);
  const child = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d;
  });
  const stop = async () => {
    running.delete(stop);
    if (child.exitCode !== null) return;
    child.kill('SIGQUIT');
    await exited;
  };
  running.add(stop);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilServing(child, `${baseUrl}/_healthz`, () => stderr);
  return {
    baseUrl,
    local,
    exited,
    stop,
  };
}

async function waitUntilServing(child: ChildProcess, url: string, stderr: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`nginx did not answer on ${url}: ${stderr()}`);
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
