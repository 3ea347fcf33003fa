// A real Git server on loopback: Debian's `git http-backend` (CGI) behind a small Node HTTP front
// with basic auth, over bare repositories made with the real `git`. Options make it misbehave the
// ways a write-back must survive: a protected branch (a real pre-receive hook), a concurrent
// writer (a real commit made in the bare repository between our fetch and our push), a redirect,
// a hostile answer.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Someone Else',
  GIT_AUTHOR_EMAIL: 'someone@example.com',
  GIT_COMMITTER_NAME: 'Someone Else',
  GIT_COMMITTER_EMAIL: 'someone@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: '/nonexistent',
};

/** Runs the real git; stdout as text. */
export function runGit(
  args: string[],
  options: { cwd?: string; input?: string | Buffer; env?: Record<string, string> } = {},
): string {
  return execFileSync('git', args, {
    cwd: options.cwd,
    input: options.input,
    env: { ...process.env, ...GIT_ENV, ...options.env },
    maxBuffer: 1024 * 1024 * 1024,
  }).toString('utf8');
}

export interface GitServerOptions {
  username?: string;
  password?: string;
  /** Answer every request with this instead of Git. */
  hostile?: 'garbage' | 'huge' | 'silent';
  /** Redirect every request to this origin (with the same path). */
  redirectTo?: string;
  /** Serve https with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
}

/** What the server saw. */
export interface SeenRequest {
  method: string;
  url: string;
  authorization?: string;
}

export class GitServer {
  readonly root: string;
  readonly seen: SeenRequest[] = [];
  /**
   * Runs once, before answering the first receive-pack request of kind `raceAt` (a concurrent
   * writer): the ref advertisement (the client sees the branch moved) or the push itself (the
   * server refuses the client's stale old value).
   */
  beforeReceivePack: (() => void) | undefined;
  raceAt: 'advertisement' | 'push' = 'advertisement';
  private server: Server | undefined;
  private readonly options: GitServerOptions;
  origin = '';

  constructor(root: string, options: GitServerOptions = {}) {
    this.root = root;
    this.options = options;
  }

  async start(host = '127.0.0.1'): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
    this.server = this.options.tls ? createHttpsServer(this.options.tls, handler) : createServer(handler);
    await new Promise<void>((resolve) => this.server?.listen(0, host, resolve));
    const { port } = this.server.address() as AddressInfo;
    this.origin = `${this.options.tls ? 'https' : 'http'}://${host}:${port}`;
    return this;
  }

  async stop(): Promise<void> {
    const { server } = this;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(name: string): string {
    return `${this.origin}/${name}.git`;
  }

  gitDir(name: string): string {
    return join(this.root, `${name}.git`);
  }

  /** The real git run in repository `name`; stdout as text. */
  git(name: string, ...args: string[]): string {
    return runGit(args, { cwd: this.gitDir(name) });
  }

  /** The commit `branch` of repository `name` points at. */
  head(name: string, branch = 'main'): string {
    return this.git(name, 'rev-parse', `refs/heads/${branch}`).trim();
  }

  private made = 0;

  /** A new repository `site-N` whose main holds one commit of `files`; its name. */
  newRepo(files: Record<string, string | Buffer>): string {
    const name = `site-${++this.made}`;
    this.createRepo(name, files);
    return name;
  }

  /** A bare repository whose `branch` holds one commit of `files`. */
  createRepo(name: string, files: Record<string, string | Buffer>, branch = 'main'): string {
    const bare = this.gitDir(name);
    runGit(['init', '--quiet', '--bare', `--initial-branch=${branch}`, bare]);
    runGit(['config', 'http.receivepack', 'true'], { cwd: bare });
    this.commitDirect(name, branch, files, 'initial');
    return bare;
  }

  /** A commit of `files` on `branch` made in the bare repository itself (plumbing, a temporary index). */
  commitDirect(
    name: string,
    branch: string,
    files: Record<string, string | Buffer>,
    message = 'someone else',
  ): string {
    const bare = this.gitDir(name);
    const index = join(this.root, `${name}.index`);
    const env = { GIT_INDEX_FILE: index, GIT_DIR: bare };
    let parent: string | undefined;
    try {
      parent = runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { env }).trim();
    } catch {}
    runGit(parent ? ['read-tree', parent] : ['read-tree', '--empty'], { env });
    for (const [path, content] of Object.entries(files)) {
      const blob = runGit(['hash-object', '-w', '--stdin'], { env, input: content }).trim();
      runGit(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
    }
    const tree = runGit(['write-tree'], { env }).trim();
    const commit = runGit(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message], {
      env,
    }).trim();
    runGit(['update-ref', `refs/heads/${branch}`, commit, ...(parent ? [parent] : [])], { env });
    return commit;
  }

  /** A real pre-receive hook refusing pushes to `branch` with `reason`. */
  protect(name: string, branch: string, reason: string): void {
    this.preReceive(
      name,
      `while read old new ref; do\n  if [ "$ref" = "refs/heads/${branch}" ]; then\n    echo ${JSON.stringify(reason)} >&2\n    exit 1\n  fi\ndone`,
    );
  }

  /** A real pre-receive hook running `script` (sh): what it prints to stderr reaches the client. */
  preReceive(name: string, script: string): void {
    const hooks = join(this.gitDir(name), 'hooks');
    mkdirSync(hooks, { recursive: true });
    const hook = join(hooks, 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\n${script}\n`);
    chmodSync(hook, 0o755);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    const { hostile, redirectTo, username, password } = this.options;
    if (redirectTo) {
      res.writeHead(302, { location: `${redirectTo}${req.url}` }).end();
      return;
    }
    if (hostile === 'silent') return; // never answers
    if (hostile === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
      res.end('this is not pkt-line at all\n');
      return;
    }
    if (hostile === 'huge') {
      // A well-formed ref advertisement, then a pack that never ends: only a size bound stops it.
      const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
        const oid = '1'.repeat(40);
        res.end(
          `${pkt('# service=git-upload-pack\n')}0000${pkt(`${oid} HEAD\0shallow side-band-64k symref=HEAD:refs/heads/main\n`)}${pkt(`${oid} refs/heads/main\n`)}0000`,
        );
        return;
      }
      req.resume();
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' });
      res.write(pkt('NAK\n'));
      const data = pkt(`\x01${'P'.repeat(65_000)}`);
      const write = () => {
        while (res.write(data)) {}
      };
      res.on('drain', write);
      res.on('close', () => res.off('drain', write));
      write();
      return;
    }
    if (username !== undefined) {
      const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('authentication required\n');
        return;
      }
    }
    const url = new URL(req.url ?? '/', 'http://git');
    const receivePack =
      this.raceAt === 'advertisement'
        ? url.searchParams.get('service') === 'git-receive-pack'
        : url.pathname.endsWith('/git-receive-pack');
    if (receivePack && this.beforeReceivePack) {
      const hook = this.beforeReceivePack;
      this.beforeReceivePack = undefined;
      hook();
    }
    this.cgi(req, res, url);
  }

  private cgi(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const child = spawn(HTTP_BACKEND, [], {
      env: {
        ...GIT_ENV,
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: this.options.username ?? 'anonymous',
        REMOTE_ADDR: '127.0.0.1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
          : {}),
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
    });
    req.pipe(child.stdin);
    child.stdin.on('error', () => {});
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const key = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (key.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[key] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    child.stdout.on('end', () => {
      if (!headersDone) res.writeHead(502);
      res.end();
    });
    child.on('error', () => res.destroy());
  }
}
