// Where the API server is and how to authenticate, from a kubeconfig file or the in-cluster
// service account. The common cases (certificates, tokens, token files, in-cluster) are read here;
// kubeconfigs with exec plugins, auth providers or several files go through client-node, loaded
// only then: importing it costs the operator about 85 MB of resident memory.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

export interface KubeAccess {
  server: string;
  /** The default namespace: the current context's, or the service account's in a pod. */
  namespace?: string;
  tls: { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean };
  /** Authorization headers, computed again on each call (token files rotate). */
  headers(): Promise<Record<string, string>>;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface ClusterEntry {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
}
interface UserEntry {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  'auth-provider'?: unknown;
}
interface KubeconfigFile {
  'current-context'?: string;
  clusters?: { name: string; cluster?: ClusterEntry }[];
  users?: { name: string; user?: UserEntry }[];
  contexts?: { name: string; context?: { cluster?: string; user?: string; namespace?: string } }[];
}

/**
 * `file`, else KUBECONFIG, else ~/.kube/config, else the in-cluster service account (the order
 * kubectl and client-node use).
 */
export async function loadKubeAccess(
  file?: string,
  env: NodeJS.ProcessEnv = process.env,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Promise<KubeAccess> {
  if (file) return fromFile(file);
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length > 1) return viaClientNode((kc) => kc.loadFromDefault());
  if (fromEnv[0]) return fromFile(fromEnv[0]);
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromFile(home);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(serviceAccountDir, 'token')))
    return inCluster(env, serviceAccountDir);
  throw new Error(
    'no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod with a service account',
  );
}

async function inCluster(env: NodeJS.ProcessEnv, dir: string): Promise<KubeAccess> {
  const host = env.KUBERNETES_SERVICE_HOST as string;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ...optional('namespace', (await readFile(join(dir, 'namespace'), 'utf8').catch(() => undefined))?.trim()),
    tls: { ca: await readFile(join(dir, 'ca.crt'), 'utf8'), rejectUnauthorized: true },
    // The kubelet rotates the projected token: read it again each time.
    headers: async () => ({ authorization: `Bearer ${(await readFile(join(dir, 'token'), 'utf8')).trim()}` }),
  };
}

async function fromFile(file: string): Promise<KubeAccess> {
  const config = (parse(await readFile(file, 'utf8')) ?? {}) as KubeconfigFile;
  const current = config['current-context'];
  if (!current) throw new Error(`kubeconfig ${file} has no current-context`);
  const find = <T extends { name: string }>(
    list: T[] | undefined,
    name: string | undefined,
    what: string,
  ) => {
    const found = list?.find((e) => e.name === name);
    if (!found)
      throw new Error(`kubeconfig ${file}: ${what} "${name ?? ''}" of context "${current}" is not defined`);
    return found;
  };
  const context = find(config.contexts, current, 'context').context ?? {};
  const cluster = find(config.clusters, context.cluster, 'cluster').cluster ?? {};
  const user = context.user ? (find(config.users, context.user, 'user').user ?? {}) : {};
  if (user.exec || user['auth-provider']) return viaClientNode((kc) => kc.loadFromFile(file));
  if (!cluster.server) throw new Error(`kubeconfig ${file}: cluster "${context.cluster}" has no server`);
  const path = (p: string) => (isAbsolute(p) ? p : join(dirname(file), p));
  const pem = async (data: string | undefined, p: string | undefined) =>
    data ? Buffer.from(data, 'base64').toString('utf8') : p ? readFile(path(p), 'utf8') : undefined;
  const tokenFile = user.tokenFile;
  const basic = user.username !== undefined && user.password !== undefined;
  const headers = async (): Promise<Record<string, string>> => {
    if (user.token) return { authorization: `Bearer ${user.token}` };
    if (tokenFile) return { authorization: `Bearer ${(await readFile(path(tokenFile), 'utf8')).trim()}` };
    if (basic)
      return {
        authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`,
      };
    return {};
  };
  return {
    server: cluster.server,
    ...optional('namespace', context.namespace),
    tls: {
      ...optional('ca', await pem(cluster['certificate-authority-data'], cluster['certificate-authority'])),
      ...optional('cert', await pem(user['client-certificate-data'], user['client-certificate'])),
      ...optional('key', await pem(user['client-key-data'], user['client-key'])),
      rejectUnauthorized: !cluster['insecure-skip-tls-verify'],
    },
    headers,
  };
}

const optional = <K extends string>(k: K, v: string | undefined) => (v === undefined ? {} : { [k]: v });

type LoadableKubeConfig = { loadFromFile(f: string): void; loadFromDefault(): void };

async function viaClientNode(load: (kc: LoadableKubeConfig) => void): Promise<KubeAccess> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  load(kc);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const opts: Record<string, unknown> = {};
  await kc.applyToHTTPSOptions(opts);
  return {
    server: cluster.server,
    ...optional('namespace', kc.getContextObject(kc.getCurrentContext())?.namespace),
    tls: {
      ...optional('ca', opts.ca as string | undefined),
      ...optional('cert', opts.cert as string | undefined),
      ...optional('key', opts.key as string | undefined),
      rejectUnauthorized: !cluster.skipTLSVerify,
    },
    async headers() {
      const fresh: { headers?: Record<string, unknown> } = {};
      await kc.applyToHTTPSOptions(fresh);
      return Object.fromEntries(
        Object.entries(fresh.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
      );
    },
  };
}
