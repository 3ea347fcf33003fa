import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { registerSecret } from '../redact.ts';
import { OciError } from './errors.ts';

export interface RegistryCredentials {
  username: string;
  password: string;
}

/** Where credentials were found, for messages (never the credentials themselves). */
export interface FoundCredentials extends RegistryCredentials {
  source: string;
}

export interface AuthFile {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credsStore?: string;
  credHelpers?: Record<string, string>;
}

/**
 * The auth files Podman, skopeo and Docker read, in their order: `$REGISTRY_AUTH_FILE`, then
 * `${XDG_RUNTIME_DIR}/containers/auth.json`, then `$DOCKER_CONFIG/config.json` or `~/.docker/config.json`.
 */
export function authFileCandidates(env: NodeJS.ProcessEnv): string[] {
  const files: string[] = [];
  if (env.REGISTRY_AUTH_FILE) files.push(env.REGISTRY_AUTH_FILE);
  if (env.XDG_RUNTIME_DIR) files.push(join(env.XDG_RUNTIME_DIR, 'containers', 'auth.json'));
  files.push(join(env.DOCKER_CONFIG ?? join(env.HOME ?? homedir(), '.docker'), 'config.json'));
  return files;
}

/** Keys an auth file may use for `registry`: the bare host, with a scheme, with /v1/ or /v2/. */
function authKeyMatches(key: string, registry: string): boolean {
  const host = key
    .replace(/^[a-z]+:\/\//, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
  if (host === registry) return true;
  // Docker Hub is stored under its legacy index name.
  return registry === 'docker.io' && host === 'index.docker.io';
}

function decodeAuth(value: string, source: string): RegistryCredentials {
  const text = Buffer.from(value, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0) throw new OciError('Usage', `${source}: the "auth" entry is not base64 of user:password`);
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * Credentials for `registry` from the first auth file that has an entry for it, or undefined
 * (anonymous). An explicit `authFile` is the only file read and must exist.
 */
export async function credentialsFromAuthFiles(
  registry: string,
  env: NodeJS.ProcessEnv,
  authFile?: string,
): Promise<FoundCredentials | undefined> {
  for (const file of authFile ? [authFile] : authFileCandidates(env)) {
    let parsed: AuthFile;
    try {
      parsed = JSON.parse(await readFile(file, 'utf8')) as AuthFile;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && !authFile) continue;
      throw new OciError(
        'Usage',
        `auth file ${file} cannot be read (${code ?? 'not JSON'}): fix or remove it, or pass --authfile`,
      );
    }
    const helper = helperFor(parsed, registry);
    // Docker's order: a registry's own helper, the file's entry, then the default store.
    const creds =
      (helper.own && (await fromHelper(helper.own, registry, file, env))) ||
      authConfigCredentials(parsed, registry, file) ||
      (helper.store && (await fromHelper(helper.store, registry, file, env)));
    if (creds) return { ...creds, source: file };
  }
  return undefined;
}

/** The credential helpers an auth file names for `registry`: its own (`credHelpers`), the default (`credsStore`). */
function helperFor(config: AuthFile, registry: string): { own?: string; store?: string } {
  const own = Object.entries(config.credHelpers ?? {}).find(([key]) => authKeyMatches(key, registry))?.[1];
  return { ...(own ? { own } : {}), ...(config.credsStore ? { store: config.credsStore } : {}) };
}

const HELPER_TIMEOUT_MS = 30_000;
// What docker-credential-* helpers print when they hold nothing for the server.
const NOT_FOUND = /credentials not found/i;

/**
 * Asks `docker-credential-<name> get` (the Docker credential helper protocol: the server on stdin,
 * `{"Username","Secret"}` on stdout), as `docker login` with a helper or store left them.
 */
async function fromHelper(
  name: string,
  registry: string,
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<RegistryCredentials | undefined> {
  const program = `docker-credential-${name}`;
  const { stdout, failure } = await new Promise<{ stdout: string; failure?: string }>((resolve) => {
    const child = execFile(program, ['get'], { env, timeout: HELPER_TIMEOUT_MS }, (error, out, err) => {
      if (!error) return resolve({ stdout: out });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return resolve({ stdout: '', failure: `${program} is not on PATH` });
      const said = `${out}\n${err}`.trim();
      if (NOT_FOUND.test(said)) return resolve({ stdout: '' });
      resolve({
        stdout: '',
        failure: `${program} get failed (${error.killed ? 'timed out' : `exit ${error.code}`}): ${said.slice(0, 200)}`,
      });
    });
    child.stdin?.end(registry);
  });
  if (failure) {
    throw new OciError(
      'Usage',
      `auth file ${file} names the credential helper ${name} for ${registry}, but ${failure}: install the helper, log in again, or pass --username with --password-stdin`,
    );
  }
  if (!stdout.trim()) return undefined;
  let answer: { Username?: unknown; Secret?: unknown };
  try {
    answer = JSON.parse(stdout) as typeof answer;
  } catch {
    throw new OciError('Usage', `${program} get answered something other than JSON for ${registry}`);
  }
  if (typeof answer.Username !== 'string' || typeof answer.Secret !== 'string' || !answer.Secret) {
    throw new OciError('Usage', `${program} get answered without a Username and Secret for ${registry}`);
  }
  registerSecret(answer.Secret);
  return { username: answer.Username, password: answer.Secret };
}

/** The entry for `registry` in a parsed auth file (`{"auths": …}`), as a Docker config Secret holds it. */
export function authConfigCredentials(
  config: AuthFile,
  registry: string,
  source: string,
): RegistryCredentials | undefined {
  for (const [key, entry] of Object.entries(config.auths ?? {})) {
    if (!authKeyMatches(key, registry)) continue;
    const creds = entry.auth
      ? decodeAuth(entry.auth, source)
      : entry.username !== undefined && entry.password !== undefined
        ? { username: entry.username, password: entry.password }
        : undefined;
    if (!creds) continue;
    registerSecret(creds.password);
    return creds;
  }
  return undefined;
}

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses a `WWW-Authenticate` header: `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`. */
export function parseChallenge(header: string): Challenge | undefined {
  const match = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const pair = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))\s*,?/g;
  for (let m = pair.exec(match[2] ?? ''); m; m = pair.exec(match[2] ?? '')) {
    params[(m[1] as string).toLowerCase()] = m[2] === undefined ? (m[3] ?? '') : m[2].replace(/\\(.)/g, '$1');
  }
  return { scheme: (match[1] as string).toLowerCase(), params };
}

export function basicAuthorization(creds: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
}
