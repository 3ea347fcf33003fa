// Git over SSH for isomorphic-git, which speaks only smart HTTP: an `http` plugin whose requests
// run `git-upload-pack '<path>'` / `git-receive-pack '<path>'` on an SSH exec channel (protocol v0,
// as git does over SSH). A GET of info/refs returns the server's advertisement, prefixed with the
// `# service=…` pkt-line and a flush as smart HTTP has it; a POST opens a new session, drops its
// advertisement, writes the request and returns the rest. ssh2 (pure JavaScript) speaks SSH.
//
// The host key is checked against known_hosts before anything else: a key that is not listed ends
// the connection during the key exchange, before authentication, so nothing of the user's key is
// used or sent. The same bounds as HTTPS apply: connect/handshake and silence timeouts, the largest
// response, the call's signal.
import { createHash } from 'node:crypto';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import type { Client, ClientChannel } from 'ssh2';
import { HttpTimeoutError } from '../http.ts';
import { serverReason } from './failures.ts';
import { bounded, collect, type GitHttpLimits, responseBound } from './http-transport.ts';
import { blobType, hostKeyAlgorithms, hostKeyKnown, knownHost, knownHostName } from './known-hosts.ts';
import { describeSshRemote, type SshRemote } from './ssh-url.ts';
import { GitFailure } from './types.ts';

export interface SshKey {
  /** The private key (OpenSSH or PEM), Flux's `identity`. */
  identity: string;
  /** Its passphrase (Flux's `password` beside `identity`). */
  passphrase?: string;
  /** Flux's `known_hosts`. */
  knownHosts: string;
}

type Service = 'git-upload-pack' | 'git-receive-pack';
type ResponseBound = ReturnType<typeof responseBound>;

const CIPHERS = [
  'aes128-gcm@openssh.com',
  'aes256-gcm@openssh.com',
  'aes128-ctr',
  'aes256-ctr',
  'chacha20-poly1305@openssh.com',
];

/** Longest stderr kept from a session (its first line is quoted when the server refuses). */
const MAX_STDERR = 4096;

/**
 * A transport for one repository over SSH: requests name the service by their path (as
 * isomorphic-git's smart HTTP client forms them) and go to `remote` only. One connection, opened at
 * the first request; `close()` ends it. Refuses at once when known_hosts lists no key for the host.
 * Responses are bounded as over HTTPS (responseBound): `refuse` hears of one over its bound.
 */
export function gitSshClient(
  remote: SshRemote,
  key: SshKey,
  limits: GitHttpLimits,
  signal: AbortSignal,
  refuse: (failure: GitFailure) => void,
): HttpClient & { close(): void } {
  const repository = describeSshRemote(remote);
  const known = knownHost(key.knownHosts, remote.host, remote.port);
  const algorithms = hostKeyAlgorithms(known);
  if (algorithms.length === 0) {
    const ca =
      known.certificateAuthorities > 0 ? ' (only @cert-authority lines, which are not supported)' : '';
    throw new GitFailure(
      'GitHostKeyUnknown',
      `known_hosts in spec.gitWriteBack.secretRef lists no host key for ${knownHostName(remote.host, remote.port)}${ca}: add the server's key (ssh-keyscan ${remote.port === 22 ? '' : `-p ${remote.port} `}${remote.host}, checked against the key your Git host publishes); nothing was sent`,
    );
  }
  let connection: Promise<Client> | undefined;
  /** Sessions whose advertisement a GET returned, kept for the POST that follows it. */
  const waiting = new Map<Service, Session>();
  let client: Client | undefined;
  const connect = () => {
    connection ??= open(remote, key, algorithms, known, limits, signal, repository).then((c) => {
      client = c;
      return c;
    });
    return connection;
  };
  return {
    close: () => {
      for (const session of waiting.values()) session.send(Buffer.from('0000'));
      waiting.clear();
      client?.end();
      connection?.then((c) => c.end()).catch(() => {});
    },
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const url = new URL(req.url);
      const post = (req.method ?? 'GET') === 'POST';
      const service = (post ? url.pathname.split('/').at(-1) : url.searchParams.get('service')) ?? '';
      if (service !== 'git-upload-pack' && service !== 'git-receive-pack')
        throw new GitFailure('GitUnsupported', `${repository}: no SSH command for ${url.pathname}`);
      const body = post && req.body ? Buffer.concat(await collect(req.body)) : undefined;
      // A POST goes on in the session whose advertisement the GET before it returned, as git
      // itself does over SSH: one server process per fetch or push, not two.
      const earlier = waiting.get(service);
      waiting.delete(service);
      if (earlier && !post) earlier.send(Buffer.from('0000'));
      const reuse = post ? earlier : undefined;
      const session =
        reuse ?? (await Session.start(await connect(), service, remote.path, limits, signal, repository));
      const advertisement = reuse
        ? Buffer.alloc(0)
        : await session.advertisement(responseBound(new URL('/info/refs', url), limits), refuse);
      let content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
      if (post) {
        session.send(body ?? Buffer.alloc(0));
        content = session.rest();
      } else {
        waiting.set(service, session);
        content = [Buffer.concat([pktLine(`# service=${service}\n`), Buffer.from('0000'), advertisement])];
      }
      return {
        url: url.href,
        method: req.method,
        statusCode: 200,
        statusMessage: 'OK',
        headers: { 'content-type': `application/x-${service}-${post ? 'result' : 'advertisement'}` },
        body: bounded(content, responseBound(url, limits), repository, refuse),
      };
    },
  };
}

/** The SHA256 fingerprint ssh-keygen -l prints for a key blob. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

async function open(
  remote: SshRemote,
  key: SshKey,
  algorithms: string[],
  known: ReturnType<typeof knownHost>,
  limits: GitHttpLimits,
  signal: AbortSignal,
  repository: string,
): Promise<Client> {
  signal.throwIfAborted();
  // Loaded on first use: releases that write over HTTPS (or not at all) never load it.
  const { Client } = await import('ssh2');
  const client = new Client();
  let refusedKey: Buffer | undefined;
  return new Promise<Client>((resolve, reject) => {
    const onAbort = () => {
      client.destroy();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => signal.removeEventListener('abort', onAbort);
    let ready = false;
    client.once('ready', () => {
      ready = true;
      settle();
      resolve(client);
    });
    // Also after ready: a connection lost mid-session ends its channels, whose readers then fail.
    client.on('error', (error: Error & { level?: string }) => {
      client.destroy();
      if (ready) return;
      settle();
      if (refusedKey) {
        const type = blobType(refusedKey) ?? 'unknown';
        reject(
          new GitFailure(
            'GitHostKeyUnknown',
            `${repository} presented a ${type} host key (${fingerprint(refusedKey)}) that known_hosts in spec.gitWriteBack.secretRef does not list for ${knownHostName(remote.host, remote.port)}: the connection was closed before authentication (nothing of the key was sent). If the server's key changed, check the new one with your Git host and update known_hosts`,
          ),
        );
      } else if (error.level === 'client-authentication') {
        reject(
          new GitFailure(
            'GitAuthRefused',
            `${repository} refused the SSH key (identity in spec.gitWriteBack.secretRef) for user ${remote.user}: add its public key (identity.pub) to the repository as a deploy key with write access`,
          ),
        );
      } else if (error.level === 'client-timeout') {
        reject(new HttpTimeoutError('connect', limits.headersTimeoutMs));
      } else reject(error);
    });
    try {
      connectTo(client, remote, key, algorithms, known, limits, (blob) => {
        refusedKey = blob;
      });
    } catch (error) {
      // ssh2 parses the key before it connects: its words name the format, never the key.
      settle();
      reject(
        new GitFailure(
          'GitUnsupported',
          `identity in spec.gitWriteBack.secretRef is not a private key that can be used (${(error as Error).message}): put an OpenSSH or PEM private key there (ed25519, ECDSA or RSA), its passphrase in password`,
        ),
      );
    }
  });
}

function connectTo(
  client: Client,
  remote: SshRemote,
  key: SshKey,
  algorithms: string[],
  known: ReturnType<typeof knownHost>,
  limits: GitHttpLimits,
  refused: (blob: Buffer) => void,
): void {
  client.connect({
    host: remote.host,
    port: remote.port,
    username: remote.user,
    privateKey: key.identity,
    ...(key.passphrase === undefined ? {} : { passphrase: key.passphrase }),
    hostVerifier: (blob: Buffer) => {
      if (hostKeyKnown(known, blob)) return true;
      refused(Buffer.from(blob));
      return false;
    },
    // AES-GCM first: node:crypto's (native) AES, where ssh2's preferred ChaCha20-Poly1305 runs in
    // JavaScript without its optional native module (docs/benchmarks/2026-11-27.md#git-write-back-over-ssh-against-https-issue-42).
    algorithms: { serverHostKey: algorithms, cipher: CIPHERS },
    authHandler: ['publickey'],
    // TCP connect, key exchange and authentication together.
    readyTimeout: limits.connectTimeoutMs + limits.headersTimeoutMs,
  });
}

/** One exec channel running a Git service: its advertisement first, then the rest of its output. */
class Session {
  private readonly chunks: AsyncIterator<Buffer>;
  private buffer = Buffer.alloc(0);
  private stderr = '';
  private exitCode: number | null = null;
  private timer: NodeJS.Timeout | undefined;

  private readonly channel: ClientChannel;
  private readonly limits: GitHttpLimits;
  private readonly repository: string;

  private constructor(channel: ClientChannel, limits: GitHttpLimits, repository: string) {
    this.channel = channel;
    this.limits = limits;
    this.repository = repository;
    this.chunks = channel[Symbol.asyncIterator]();
    channel.stderr.on('data', (d: Buffer) => {
      if (this.stderr.length < MAX_STDERR) this.stderr += d.toString('utf8').slice(0, MAX_STDERR);
    });
    channel.on('exit', (code) => {
      this.exitCode = code;
    });
  }

  static start(
    client: Client,
    service: Service,
    path: string,
    limits: GitHttpLimits,
    signal: AbortSignal,
    repository: string,
  ): Promise<Session> {
    // Quoted as git quotes it for the remote shell: '…' with each ' as '\''.
    const command = `${service} '${path.replace(/'/g, "'\\''")}'`;
    return new Promise((resolve, reject) => {
      client.exec(command, (error, channel) => {
        if (error) return reject(error);
        const session = new Session(channel, limits, repository);
        const onAbort = () => channel.destroy(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        channel.on('close', () => signal.removeEventListener('abort', onAbort));
        resolve(session);
      });
    });
  }

  /** The ref advertisement: every pkt-line up to and including the flush, failing past `bound` as bounded() does. */
  async advertisement(bound: ResponseBound, refuse: (failure: GitFailure) => void): Promise<Buffer> {
    for (;;) {
      const end = flushEnd(this.buffer);
      if (end !== undefined) {
        const ad = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end);
        return ad;
      }
      if (this.buffer.length > bound.max) {
        this.channel.destroy();
        for await (const _ of bounded([this.buffer], bound, this.repository, refuse));
      }
      const next = await this.next();
      if (next === undefined) throw this.ended();
      this.buffer = Buffer.concat([this.buffer, next]);
    }
  }

  send(data: Buffer): void {
    this.channel.end(data);
  }

  /** What follows the advertisement, to the end of the session. */
  async *rest(): AsyncGenerator<Uint8Array> {
    if (this.buffer.length > 0) yield this.buffer;
    for (;;) {
      const next = await this.next();
      if (next === undefined) return;
      yield next;
    }
  }

  /** The next chunk of output, or undefined at its end; silence longer than bodyTimeoutMs fails. */
  private async next(): Promise<Buffer | undefined> {
    const ms = this.limits.bodyTimeoutMs;
    const silence = new Promise<never>((_, reject) => {
      this.timer = setTimeout(() => {
        this.channel.destroy();
        reject(new HttpTimeoutError('body', ms));
      }, ms);
    });
    try {
      const r = await Promise.race([this.chunks.next(), silence]);
      return r.done ? undefined : r.value;
    } finally {
      clearTimeout(this.timer);
    }
  }

  /** Why the session ended before its advertisement: the server's first stderr line. */
  private ended(): GitFailure {
    const why = serverReason(this.stderr.split('\n')) ?? `it exited with ${this.exitCode ?? 'no status'}`;
    return new GitFailure(
      'GitUnreachable',
      `${this.repository} did not serve the repository over SSH: ${why}`,
    );
  }
}

/** Where the first flush-pkt ("0000") of a pkt-line stream ends, or undefined if it has not arrived. */
function flushEnd(buffer: Buffer): number | undefined {
  let at = 0;
  while (at + 4 <= buffer.length) {
    const hex = buffer.subarray(at, at + 4).toString('latin1');
    const length = /^[0-9a-f]{4}$/i.test(hex) ? Number.parseInt(hex, 16) : -1;
    if (length === 0) return at + 4;
    if (length < 4) throw new GitFailure('GitUnreachable', 'the SSH server did not answer in pkt-lines');
    at += length;
  }
  return undefined;
}

function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0')), payload]);
}
