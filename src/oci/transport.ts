// How requests reach a registry: one keep-alive pool (src/http.ts: Node's http/https, the process's
// one HTTP stack) per registry, retries of what can be sent again, redirects for reads, and auth
// following the WWW-Authenticate challenge (anonymous, Basic, Bearer token per scope, cached). A
// request's signal aborts it wherever it is: connecting, waiting for a token or a retry, or
// streaming its body. Nothing secret (passwords, tokens, upload locations, redirect targets)
// reaches a message: errors name the method and the API path only.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { HttpAgent, readBytes } from '../http.ts';
import { registerSecret } from '../redact.ts';
import { backoff, pause } from '../timers.ts';
import { basicAuthorization, type Challenge, parseChallenge, type RegistryCredentials } from './auth.ts';
import { OciError } from './errors.ts';
import { isLoopbackRegistry } from './reference.ts';

export interface TransportOptions {
  /** Host[:port] as in an `oci://` reference. */
  registry: string;
  credentials?: RegistryCredentials;
  /** PEM CA bundle trusted for the registry's TLS certificate (instead of the system's). */
  ca?: string | Buffer;
  /**
   * Talk plain http. Without it, only loopback registries (localhost, 127.0.0.0/8, ::1) without
   * a CA are reached over http; everything else is https.
   */
  plainHttp?: boolean;
  /** Per-request wait for an answer and for each silence in a body. Default 60 s. */
  timeoutMs?: number;
  /** Retries of idempotent requests on network errors, 429 and 5xx. Default 3. */
  retries?: number;
}

export type Body = Buffer | string | Readable | AsyncIterable<Uint8Array> | undefined;

export interface CallOptions {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  /** API path (`/v2/...`) or an absolute URL the registry gave (upload location). */
  path: string;
  /** Repositories and the actions needed, for a Bearer token's scope. */
  scope: string[];
  headers?: Record<string, string>;
  body?: Body;
  /** Statuses that are answers rather than errors. */
  expect: number[];
  /** What this call does, for messages ("push manifest docs:latest"). */
  what: string;
  /** Aborts the call and its body with the signal's reason; nothing is retried after it. */
  signal?: AbortSignal | undefined;
}

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/** Reads a small body to its end (so the connection goes back to the pool). */
export async function drain(body: IncomingMessage): Promise<void> {
  for await (const _ of body) {
    // discarded
  }
}

// Manifests, tag lists and token answers are small; a registry sending more is not followed.
const MAX_JSON_BYTES = 4 * 1024 * 1024;

/** A small answer's whole body (a manifest, a tag list, a token). */
export function readSmall(body: IncomingMessage): Promise<Buffer> {
  return readBytes(
    body,
    MAX_JSON_BYTES,
    () => new OciError('Protocol', `registry answer over ${MAX_JSON_BYTES} bytes`),
  );
}

export function header(res: Response, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const MAX_REDIRECTS = 5;
// A network error is retried sooner than a registry that answered it is overloaded (429, 5xx).
const NETWORK_RETRY = { base: 200, max: Number.POSITIVE_INFINITY };
const BUSY_RETRY = { base: 500, max: Number.POSITIVE_INFINITY };

function isReplayable(body: Body): boolean {
  return body === undefined || typeof body === 'string' || Buffer.isBuffer(body);
}

/** The registry's error text (`{"errors":[{"code","message"}]}`), short. */
async function errorText(res: Response): Promise<string> {
  try {
    const text = (await readSmall(res.body)).toString('utf8');
    const parsed = JSON.parse(text) as { errors?: { code?: string; message?: string }[] };
    const first = parsed.errors?.[0];
    if (first) return `${first.code ?? ''}${first.message ? `: ${first.message}` : ''}`.slice(0, 300);
    return text.slice(0, 200);
  } catch {
    return '';
  }
}

export class RegistryTransport {
  readonly registry: string;
  readonly baseUrl: string;
  private readonly agent: HttpAgent;
  private readonly credentials: RegistryCredentials | undefined;
  private readonly retries: number;
  /** The challenge scheme learned from the registry (undefined until a 401 or when anonymous works). */
  private challenge: Challenge | undefined;
  /** Bearer tokens by scope key. */
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  constructor(options: TransportOptions) {
    this.registry = options.registry;
    const plain =
      options.plainHttp === true || (options.ca === undefined && isLoopbackRegistry(options.registry));
    this.baseUrl = `${plain ? 'http' : 'https'}://${options.registry}`;
    this.credentials = options.credentials;
    if (options.credentials) registerSecret(options.credentials.password);
    this.retries = options.retries ?? 3;
    const timeoutMs = options.timeoutMs ?? 60_000;
    this.agent = new HttpAgent({
      connectTimeoutMs: Math.min(30_000, timeoutMs),
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: timeoutMs,
      ...(options.ca === undefined ? {} : { tls: { ca: options.ca.toString() } }),
    });
  }

  close(): void {
    this.agent.close();
  }

  /** An absolute URL for a location the registry answered with (relative or not). */
  resolveUrl(location: string): string {
    return new URL(location, this.baseUrl).toString();
  }

  /** One API call: an answer among `expect`, or an OciError saying what failed (or the abort's reason). */
  async call(options: CallOptions): Promise<Response> {
    const { signal } = options;
    let attempt = 0;
    let authRetried = false;
    for (;;) {
      attempt += 1;
      let res: Response;
      try {
        res = await this.send(options);
      } catch (error) {
        if (error instanceof OciError || signal?.aborted) throw error;
        if (attempt <= this.retries && isReplayable(options.body)) {
          await pause(backoff(attempt - 1, NETWORK_RETRY), signal);
          continue;
        }
        const why = (error as Error).message;
        throw new OciError('Unavailable', `${options.what}: ${this.baseUrl} unreachable (${why})`, {
          cause: error,
        });
      }
      if (options.expect.includes(res.status)) return res;
      if (res.status === 401 && !authRetried) {
        const challenge = parseChallenge(header(res, 'www-authenticate') ?? '');
        await drain(res.body);
        if (challenge && isReplayable(options.body)) {
          authRetried = true;
          this.challenge = challenge;
          continue;
        }
        throw this.authError(options.what, res.status, '');
      }
      const text = await errorText(res);
      if (res.status === 401 || res.status === 403) throw this.authError(options.what, res.status, text);
      if (
        (res.status === 429 || res.status >= 500) &&
        attempt <= this.retries &&
        isReplayable(options.body)
      ) {
        await pause(backoff(attempt - 1, BUSY_RETRY), signal);
        continue;
      }
      const why = `${options.what}: registry ${this.registry} answered ${res.status}${text ? ` (${text})` : ''}`;
      if (res.status === 404) throw new OciError('NotFound', why, { status: res.status });
      if (res.status === 405) {
        throw new OciError('Unsupported', `${why}; the registry does not allow this operation`, {
          status: res.status,
        });
      }
      if (res.status === 429 || res.status >= 500)
        throw new OciError('Unavailable', why, { status: res.status });
      // The registry checked what was sent against its digest or size: the source (an archive, a
      // bundle) holds other bytes than it says.
      if (res.status === 400 && /^(DIGEST|SIZE)_INVALID\b/.test(text))
        throw new OciError('ContentMismatch', why, { status: res.status });
      throw new OciError('Protocol', why, { status: res.status });
    }
  }

  private authError(what: string, status: number, text: string): OciError {
    const hint = this.credentials
      ? 'the credentials were refused or lack permission for this repository'
      : 'the registry wants credentials: log in with `podman login`/`docker login` (auth file), or pass --username and --password-stdin';
    return new OciError(
      'Auth',
      `${what}: registry ${this.registry} answered ${status}${text ? ` (${text})` : ''}: ${hint}`,
      { status },
    );
  }

  /** One request with the current authorization, following redirects (without it) for reads. */
  private async send(options: CallOptions): Promise<Response> {
    const { signal } = options;
    let url = options.path.startsWith('/') ? `${this.baseUrl}${options.path}` : options.path;
    const headers: Record<string, string> = { 'user-agent': 'static-export', ...options.headers };
    const authorization = await this.authorization(options.scope, signal);
    if (authorization) headers.authorization = authorization;
    for (let redirects = 0; ; redirects++) {
      const res = await this.agent.request(url, {
        method: options.method,
        headers,
        ...(options.body === undefined ? {} : { body: options.body }),
        ...(signal ? { signal } : {}),
      });
      const follow =
        (options.method === 'GET' || options.method === 'HEAD') &&
        [301, 302, 303, 307, 308].includes(res.statusCode);
      if (!follow) return { status: res.statusCode, headers: res.headers, body: res.body };
      await drain(res.body);
      const location = res.headers.location;
      if (typeof location !== 'string' || redirects >= MAX_REDIRECTS) {
        throw new OciError('Protocol', `${options.what}: too many or empty redirects`);
      }
      const next = new URL(location, url);
      // A redirect to storage (a presigned link) must not carry the registry's credentials.
      if (next.origin !== new URL(url).origin) delete headers.authorization;
      url = next.toString();
    }
  }

  private async authorization(scope: string[], signal: AbortSignal | undefined): Promise<string | undefined> {
    const challenge = this.challenge;
    if (!challenge) return undefined;
    if (challenge.scheme === 'basic')
      return this.credentials ? basicAuthorization(this.credentials) : undefined;
    if (challenge.scheme !== 'bearer') {
      throw new OciError(
        'Auth',
        `registry ${this.registry} asks for unsupported auth scheme ${challenge.scheme}`,
      );
    }
    const key = scope.join(' ');
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now()) return `Bearer ${cached.token}`;
    const token = await this.fetchToken(challenge, scope, signal);
    return `Bearer ${token}`;
  }

  private async fetchToken(
    challenge: Challenge,
    scope: string[],
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const realm = challenge.params.realm;
    if (!realm || !URL.canParse(realm)) {
      throw new OciError(
        'Protocol',
        `registry ${this.registry} sent a Bearer challenge without a usable realm`,
      );
    }
    const url = new URL(realm);
    if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
    for (const s of scope) url.searchParams.append('scope', s);
    const headers: Record<string, string> = { 'user-agent': 'static-export' };
    if (this.credentials) headers.authorization = basicAuthorization(this.credentials);
    let res: Awaited<ReturnType<HttpAgent['request']>>;
    try {
      res = await this.agent.request(url.toString(), {
        method: 'GET',
        headers,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new OciError(
        'Unavailable',
        `token service of ${this.registry} unreachable (${(error as Error).message})`,
        {
          cause: error,
        },
      );
    }
    if (res.statusCode === 401 || res.statusCode === 403) {
      await drain(res.body);
      throw this.authError(`get a token for ${scope.join(' ')}`, res.statusCode, '');
    }
    if (res.statusCode !== 200) {
      await drain(res.body);
      throw new OciError('Protocol', `token service of ${this.registry} answered ${res.statusCode}`, {
        status: res.statusCode,
      });
    }
    const body = JSON.parse((await readSmall(res.body)).toString('utf8')) as {
      token?: string;
      access_token?: string;
      expires_in?: number;
    };
    const token = body.token ?? body.access_token;
    if (!token) throw new OciError('Protocol', `token service of ${this.registry} answered without a token`);
    // Spec default lifetime is 60 s; renew a little early.
    const expiresIn = body.expires_in ?? 60;
    const now = Date.now();
    registerSecret(token, now + expiresIn * 1000);
    this.tokens.set(scope.join(' '), { token, expiresAt: now + Math.max(10, expiresIn - 10) * 1000 });
    return token;
  }
}
