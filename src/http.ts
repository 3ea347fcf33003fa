// HTTP/1.1 requests for the Kubernetes and admin API clients over Node's own http/https modules.
// Bundle downloads use them too, so the process holds one HTTP stack: the undici package (the
// stack of Node's built-in fetch, loaded again as a package) added about 25 MB to the operator's
// resident memory for the same job (docs/benchmarks/2026-11-22.md#idle-memory-footprint).
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { pipeline } from 'node:stream/promises';

// Not `import` statements: Node's ES module wrapper of node:http reads every export, which loads
// the undici behind http's lazy WebSocket getters (about 14 MB of RSS and 60 ms of start-up for
// a CLI run). https and tls load only for an https origin (the root store alone is megabytes).
const http = process.getBuiltinModule('node:http');

type HttpTimeoutPhase = 'connect' | 'headers' | 'body';

/** A connect, headers or body timeout; `code` is HTTP_CONNECT_TIMEOUT, HTTP_HEADERS_TIMEOUT or HTTP_BODY_TIMEOUT. */
export class HttpTimeoutError extends Error {
  readonly phase: HttpTimeoutPhase;
  readonly code: string;
  constructor(phase: HttpTimeoutPhase, ms: number) {
    super(
      `no ${phase === 'connect' ? 'connection' : phase === 'headers' ? 'response headers' : 'body data'} within ${ms} ms`,
    );
    this.name = 'HttpTimeoutError';
    this.phase = phase;
    this.code = `HTTP_${phase.toUpperCase()}_TIMEOUT`;
  }
}

interface HttpAgentOptions {
  /** TCP connect plus TLS handshake. */
  connectTimeoutMs: number;
  /** From the request written until the response headers. */
  headersTimeoutMs: number;
  /** Longest silence between body chunks; 0 turns it off. A request may override it. */
  bodyTimeoutMs: number;
  /** Connections per origin. Default: no limit. */
  maxSockets?: number;
  /** Certificates for https origins (the cluster's CA, client certificate and key). */
  tls?: { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean };
}

interface HttpRequest {
  method: string;
  headers: Record<string, string>;
  /** A stream (a registry upload) needs its content-length among `headers`. */
  body?: string | Buffer | AsyncIterable<Uint8Array>;
  signal?: AbortSignal;
  bodyTimeoutMs?: number;
}

interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** Must be read to the end or destroyed, which returns or closes the connection. */
  body: IncomingMessage;
}

// Idle keep-alive connections close after this long, before servers drop them (Go's and nginx's
// idle limits are longer), so a request rarely races a server closing its connection.
const KEEP_ALIVE_MS = 4_000;

/** Keep-alive connection pools for http and https origins, with undici-style timeouts. */
export class HttpAgent {
  private readonly options: HttpAgentOptions;
  private readonly plain: Agent;
  private secureAgent: HttpsAgent | undefined;
  private closed = false;

  constructor(options: HttpAgentOptions) {
    this.options = options;
    this.plain = new http.Agent(this.pool());
  }

  private pool() {
    return { keepAlive: true, timeout: KEEP_ALIVE_MS, maxSockets: this.options.maxSockets ?? Infinity };
  }

  /** The https pool, made on the first https request. */
  private get secure(): HttpsAgent {
    if (this.secureAgent) return this.secureAgent;
    // One TLS context for every connection: given only the certificates, Node parses them (and the
    // root store) again for each new connection.
    const { rejectUnauthorized, ...material } = this.options.tls ?? {};
    this.secureAgent = new (process.getBuiltinModule('node:https').Agent)({
      ...this.pool(),
      secureContext: process.getBuiltinModule('node:tls').createSecureContext(material),
      ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    });
    return this.secureAgent;
  }

  /**
   * Resolves with the status and headers once they arrive; the body streams. An aborted `signal`
   * fails the request, or the body if it is already streaming, with the signal's reason.
   */
  request(url: string, init: HttpRequest): Promise<HttpResponse> {
    const { signal } = init;
    if (this.closed) {
      return Promise.reject(
        Object.assign(new Error('the connection pool is closed'), { code: 'HTTP_CLOSED' }),
      );
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const target = new URL(url);
    const isHttps = target.protocol === 'https:';
    const headers = { ...init.headers };
    const body = init.body;
    const whole = body === undefined || typeof body === 'string' || Buffer.isBuffer(body);
    if (body !== undefined && whole) headers['content-length'] = String(Buffer.byteLength(body));
    const bodyTimeoutMs = init.bodyTimeoutMs ?? this.options.bodyTimeoutMs;

    return new Promise((resolve, reject) => {
      const options = { method: init.method, headers };
      const req = isHttps
        ? process.getBuiltinModule('node:https').request(target, { ...options, agent: this.secure })
        : http.request(target, { ...options, agent: this.plain });
      let phase: HttpTimeoutPhase = 'connect';
      let response: IncomingMessage | undefined;
      let phaseMs = this.options.connectTimeoutMs;
      const enter = (next: HttpTimeoutPhase, ms: number) => {
        phase = next;
        phaseMs = ms;
        req.setTimeout(ms);
      };
      const onAbort = () => (response ?? req).destroy(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', onAbort));

      req.on('socket', (socket) => {
        if (req.reusedSocket) {
          enter('headers', this.options.headersTimeoutMs);
          return;
        }
        // The socket's idle timeout covers the TCP connect and the TLS handshake.
        enter('connect', this.options.connectTimeoutMs);
        socket.once(isHttps ? 'secureConnect' : 'connect', () => {
          if (phase === 'connect') enter('headers', this.options.headersTimeoutMs);
        });
      });
      req.on('timeout', () => {
        const error = new HttpTimeoutError(phase, phaseMs);
        // A stalled body fails the body stream its reader is iterating, not the finished request.
        (response ?? req).destroy(error);
      });
      req.on('response', (res) => {
        response = res;
        enter('body', bodyTimeoutMs);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.on('error', reject);
      if (whole) req.end(body);
      // A failing source destroys the request, which rejects through 'error' above.
      else pipeline(body, req).catch((error: unknown) => req.destroy(error as Error));
    });
  }

  /** Closes the pooled connections, and any still in use; later requests fail. */
  close(): void {
    this.closed = true;
    this.plain.destroy();
    this.secureAgent?.destroy();
  }
}

/** The whole body; more than `maxBytes` destroys it and throws what `tooLarge` returns. */
export async function readBytes(
  body: IncomingMessage,
  maxBytes = Infinity,
  tooLarge: () => Error = () => new Error(`response body over ${maxBytes} bytes`),
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The whole body as text (see readBytes). */
export async function readText(
  body: IncomingMessage,
  maxBytes = Infinity,
  tooLarge?: () => Error,
): Promise<string> {
  return (await readBytes(body, maxBytes, tooLarge)).toString('utf8');
}

// What a failed connection's code means, for a message that says what failed: fetch reports
// them all as "TypeError: fetch failed", with the code on its cause.
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'refused the connection (nothing listens at that address and port)',
  ENOTFOUND: 'could not be found (its host name does not resolve)',
  EAI_AGAIN: 'could not be found (the DNS server did not answer)',
  EHOSTUNREACH: 'is unreachable (no route to its host)',
  ENETUNREACH: 'is unreachable (no route to its network)',
  ETIMEDOUT: 'did not accept the connection in time',
  ECONNRESET: 'closed the connection without an answer',
  UND_ERR_SOCKET: 'closed the connection without an answer',
  UND_ERR_CONNECT_TIMEOUT: 'did not accept the connection in time',
  CERT_HAS_EXPIRED: 'presented an expired TLS certificate',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'presented a self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'presented a TLS certificate that could not be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'presented a TLS certificate for another host name',
};

/** A network error's code (ECONNREFUSED, …), on the error or, as fetch reports it, on its cause. */
export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Why a request got no answer, as words that follow the server's name ("… refused the connection"). */
export function connectionFailure(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { message?: string } } | undefined;
  const code = errorCode(error);
  if (code && CONNECTION_FAILURES[code]) return `${CONNECTION_FAILURES[code]} [${code}]`;
  if (e?.name === 'TimeoutError') return 'did not answer in time';
  return `could not be reached (${code ?? e?.cause?.message ?? e?.message ?? 'unknown error'})`;
}
