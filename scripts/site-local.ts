// The site chart's pod run on this machine, from the chart as `helm template` renders it: the init
// container's command as a local process with the env the kubelet would give it (this checkout's
// CLI as `static-export`), and real nginx with the rendered nginx config. The demo serves the site
// this way; the chart's tests check the chart through it.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { type ProcessResult, runProcess } from './run-process.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const NGINX = '/usr/sbin/nginx';

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

/** Secret data by Secret name and key, as the kubelet resolves secretKeyRef. */
export type SecretData = Record<string, Record<string, string>>;

/** What a local container run ended with; a signal counts as exit code 1. */
export type ContainerResult = ProcessResult & { code: number };

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

export function podSpec(objects: KubeObject[]) {
  return findObject(objects, 'Deployment').spec.template.spec;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}

/** The container's env the way the kubelet builds it; a missing Secret or key fails the pod unless optional. */
export function containerEnv(container: { env?: EnvVar[] }, secrets: SecretData): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of container.env ?? []) {
    const ref = v.valueFrom?.secretKeyRef;
    if (ref) {
      const value = secrets[ref.name]?.[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        throw new Error(`secret ${ref.name} has no key ${ref.key}`);
      }
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

/**
 * Runs the init container's rendered command as a local process: `static-export` is this
 * checkout's CLI (what the image puts on the PATH), the env is only what the chart gives it.
 * `workDir` holds the command's wrapper and is its HOME.
 */
export async function runInitContainer(
  objects: KubeObject[],
  secrets: SecretData,
  workDir: string,
): Promise<ContainerResult> {
  const init = podSpec(objects).initContainers[0];
  const env = containerEnv(init, secrets);
  const [command, ...args] = (init.command as string[]).map((a) => expandKubeVars(a, env));
  if (command !== 'static-export') throw new Error(`unexpected init command ${command}`);
  const bin = await mkdtemp(join(workDir, 'bin-'));
  await writeFile(
    join(bin, 'static-export'),
    `#!/bin/sh\nexec "${join(ROOT, 'node_modules/.bin/node')}" "${join(ROOT, 'src/cli/main.ts')}" "$@"\n`,
    { mode: 0o755 },
  );
  const result = await runProcess(command, args, {
    env: { ...env, PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: workDir },
  });
  return { ...result, code: result.code ?? 1 };
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
 * Starts real nginx with the nginx container's rendered command and the ConfigMap's files, in a
 * new directory under `workDir`. Only the two container paths are mapped to local directories: the
 * ConfigMap's mount and the /tmp prefix. The site root and port come from the values the chart
 * was rendered with. nginx's unprivileged workers must be able to reach `workDir` and the site.
 */
export async function startNginx(
  objects: KubeObject[],
  port: number,
  workDir: string,
): Promise<RunningNginx> {
  const pod = podSpec(objects);
  const container = pod.containers[0];
  const configMount = (container.volumeMounts as { name: string; mountPath: string }[]).find(
    (m) => m.name === 'nginx-config',
  )?.mountPath;
  if (!configMount) throw new Error('nginx container mounts no nginx-config volume');
  const work = await mkdtemp(join(workDir, 'nginx-'));
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
  // A spawn that fails (no such file) emits 'error' and no exit: unhandled, it would end the
  // process past every clean-up. waitUntilServing reports it.
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d;
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGQUIT');
    await exited;
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilServing(
    child,
    `${baseUrl}/_healthz`,
    () => stderr,
    () => spawnError,
  );
  return { baseUrl, local, exited, stop };
}

async function waitUntilServing(
  child: ChildProcess,
  url: string,
  stderr: () => string,
  spawnError: () => Error | undefined,
): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const failed = spawnError();
    if (failed)
      throw new Error(`${NGINX} could not be started: ${failed.message} (Debian: apt-get install nginx)`);
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

/** A loopback port free right now (for nginx's listen, which the chart renders from containerPort). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
