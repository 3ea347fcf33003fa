// A real CNCF Distribution registry on loopback for tests and benchmarks: built once from its Go
// module by scripts/go-tools/build.sh (cached), started with its own storage directory, optionally
// behind htpasswd basic auth, TLS, or token (Bearer) auth.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../../scripts/run-process.ts';
import { goTool } from '../tools/go-tools.ts';

export { goTool };

/** How long a first build of the registry may take (the Go module download and compile). */
export const GO_TOOL_BUILD_TIMEOUT_MS = 15 * 60_000;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RegistryOptions {
  /** The address it listens on: 127.0.0.1 unless pods must reach it (the real node's address). */
  host?: string;
  /** Basic auth with one user (htpasswd, bcrypt). */
  user?: { username: string; password: string };
  /** Serve https with this certificate and key (PEM files). */
  tls?: { certFile: string; keyFile: string };
  /** Token auth: the registry trusts tokens signed by this certificate and sends clients to `realm`. */
  token?: { realm: string; service: string; issuer: string; rootCertFile: string };
  /** Refuse manifest deletion (Distribution's default; tests enable it otherwise). */
  deleteDisabled?: boolean;
}

export interface TestRegistry {
  /** host:port, as in oci://<host>/... */
  host: string;
  dir: string;
  close(): Promise<void>;
}

function configYaml(
  dir: string,
  port: number,
  options: RegistryOptions,
  htpasswd: string | undefined,
): string {
  const lines = [
    'version: 0.1',
    'log:',
    '  level: error',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${join(dir, 'storage')}`,
    '  delete:',
    `    enabled: ${options.deleteDisabled !== true}`,
    'http:',
    `  addr: ${options.host ?? '127.0.0.1'}:${port}`,
    '  secret: test-registry-http-secret',
  ];
  if (options.tls)
    lines.push('  tls:', `    certificate: ${options.tls.certFile}`, `    key: ${options.tls.keyFile}`);
  if (htpasswd) lines.push('auth:', '  htpasswd:', '    realm: test-registry', `    path: ${htpasswd}`);
  if (options.token) {
    lines.push(
      'auth:',
      '  token:',
      `    realm: ${options.token.realm}`,
      `    service: ${options.token.service}`,
      `    issuer: ${options.token.issuer}`,
      `    rootcertbundle: ${options.token.rootCertFile}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function waitReady(
  host: string,
  tls: boolean,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`registry exited ${child.exitCode}:\n${output()}`);
    try {
      // Any answer (200, or 401 behind auth) means it listens; TLS without the CA still connects.
      const result = await runProcess('curl', [
        '-sk',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        `${tls ? 'https' : 'http'}://${host}/v2/`,
      ]);
      if (/^(200|401)$/.test(result.stdout)) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`registry on ${host} did not answer within 20 s:\n${output()}`);
}

export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const binary = await goTool('registry');
  const dir = await mkdtemp(join(tmpdir(), 'static-export-registry-'));
  let htpasswd: string | undefined;
  if (options.user) {
    const result = await runProcess('htpasswd', ['-Bbn', options.user.username, options.user.password]);
    if (result.code !== 0) throw new Error(`htpasswd failed: ${result.stderr}`);
    htpasswd = join(dir, 'htpasswd');
    await writeFile(htpasswd, result.stdout);
  }
  const port = await freePort();
  const config = join(dir, 'config.yml');
  await writeFile(config, configYaml(dir, port, options, htpasswd));
  const child = spawn(binary, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output = (output + d).slice(-4000);
  });
  child.stderr?.on('data', (d: Buffer) => {
    output = (output + d).slice(-4000);
  });
  const host = `${options.host ?? '127.0.0.1'}:${port}`;
  const close = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(host, options.tls !== undefined, child, () => output);
  } catch (error) {
    await close();
    throw error;
  }
  return { host, dir, close };
}

export interface TokenServer {
  /** Realm URL to configure the registry with. */
  realm: string;
  service: string;
  issuer: string;
  /** Scopes requested so far (one entry per token request). */
  requests: { scope: string[]; user: string | undefined }[];
  close(): Promise<void>;
}

/**
 * A Docker token service for the registry's `auth.token`: checks basic credentials, then grants
 * what was asked for in an ES256 JWT whose x5c header carries the certificate the registry trusts.
 */
export async function startTokenServer(options: {
  user: { username: string; password: string };
  certPem: string;
  keyPem: string;
}): Promise<TokenServer> {
  const { createServer: createHttpServer } = await import('node:http');
  const { sign, X509Certificate, randomUUID } = await import('node:crypto');
  const der = new X509Certificate(options.certPem).raw.toString('base64');
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const service = 'test-registry';
  const issuer = 'test-token-issuer';
  const requests: TokenServer['requests'] = [];
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const scope = url.searchParams.getAll('scope');
    const auth = req.headers.authorization;
    const decoded = auth?.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : undefined;
    const username = decoded?.slice(0, decoded.indexOf(':'));
    requests.push({ scope, user: username });
    if (decoded !== `${options.user.username}:${options.user.password}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"bad credentials"}');
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    const access = scope.map((s) => {
      const [type, ...rest] = s.split(':');
      const actions = rest.pop() ?? '';
      return { type, name: rest.join(':'), actions: actions.split(',') };
    });
    const head = b64({ alg: 'ES256', typ: 'JWT', x5c: [der] });
    const claims = b64({
      iss: issuer,
      sub: username,
      aud: service,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomUUID(),
      access,
    });
    const signature = sign('sha256', Buffer.from(`${head}.${claims}`), {
      key: options.keyPem,
      dsaEncoding: 'ieee-p1363',
    }).toString('base64url');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token: `${head}.${claims}.${signature}`, expires_in: 300 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service,
    issuer,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
