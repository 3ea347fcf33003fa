// isomorphic-git's HTTP client, over the process's own HTTP stack (src/http.ts) instead of the
// library's simple-get one, for three guarantees: credentials go only to the repository's own
// origin; a redirect is never followed (simple-get follows it, and a token would follow a
// redirect to the new host's scheme, port or host); every response is bounded in time and size.
import { rootCertificates } from 'node:tls';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { connectionFailure, errorCode, HttpAgent } from '../http.ts';
import { GitFailure } from './types.ts';

export interface GitHttpLimits {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Longest silence while a body streams. */
  bodyTimeoutMs: number;
  /**
   * Largest pack. isomorphic-git holds a fetched pack in memory while it indexes it; what the pack
   * inflates to is bounded apart (pack-bounds.ts).
   */
  maxResponseBytes: number;
  /**
   * Largest ref advertisement (`info/refs`): isomorphic-git keeps every advertised ref, about ten
   * times its line's size (32 MB of refs took 405 MiB, docs/benchmarks).
   */
  maxRefsBytes: number;
  /**
   * Largest answer to a push: a status line per ref and a hook's output. isomorphic-git splits
   * its progress into lines by searching all of a line it has so far at every chunk, quadratic in
   * a line's length (git relays a hook's output in small pieces: a 384 KiB line took 2 s, 2 MiB did
   * not end within 5 s); at 64 KiB that costs milliseconds however the server chunks it.
   */
  maxPushAnswerBytes: number;
}

export const GIT_HTTP_LIMITS: GitHttpLimits = {
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  maxResponseBytes: 32 * 1024 * 1024,
  maxRefsBytes: 4 * 1024 * 1024,
  maxPushAnswerBytes: 64 * 1024,
};

/** TLS errors that a private CA (the Secret's `ca.crt`) would resolve. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
]);

/**
 * A transport for one repository: `origin` gets `authorization`, every other URL is refused;
 * `signal` aborts every request (isomorphic-git passes none to a fetch). A response over its bound
 * calls `refuse` with the failure: isomorphic-git reads some bodies through a reader that takes an
 * error for the body's end, so the caller must stop the call and report it. `caCert` (PEM) is
 * trusted besides the public roots, for this transport's connections only.
 */
export function gitHttpClient(
  origin: string,
  authorization: string | undefined,
  limits: GitHttpLimits,
  signal: AbortSignal,
  refuse: (failure: GitFailure) => void,
  caCert?: string,
): HttpClient & { close(): void } {
  const agent = new HttpAgent({
    ...limits,
    ...(caCert === undefined ? {} : { tls: { ca: [...rootCertificates, caCert].join('\n') } }),
  });
  return {
    close: () => agent.close(),
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const url = new URL(req.url);
      if (url.origin !== origin) {
        throw new GitFailure(
          'GitRedirected',
          `refused a request to ${url.origin}: only ${origin} is contacted`,
        );
      }
      const headers: Record<string, string> = { ...(req.headers ?? {}) };
      if (authorization) headers.authorization = authorization;
      const body = req.body ? Buffer.concat(await collect(req.body)) : undefined;
      const res = await agent
        .request(url.href, { method: req.method ?? 'GET', headers, body, signal })
        .catch((error: unknown) => {
          const code = errorCode(error) ?? '';
          if (!UNTRUSTED.has(code)) throw error;
          const repository = `${url.origin}${url.pathname.replace(/\/(info\/refs|git-upload-pack|git-receive-pack)$/, '')}`;
          throw new GitFailure(
            'GitUnreachable',
            `${repository} ${connectionFailure(error)}: ${caCert === undefined ? 'if a private CA signed it, put that CA (PEM) in the Secret as ca.crt, as for Flux' : "the Secret's ca.crt did not sign it: put the CA that did there"}`,
          );
        });
      if (res.statusCode >= 300 && res.statusCode < 400) {
        res.body.destroy();
        throw new GitFailure('GitRedirected', redirectMessage(url, res.headers.location));
      }
      return {
        url: url.href,
        method: req.method,
        statusCode: res.statusCode,
        statusMessage: res.body.statusMessage ?? '',
        headers: Object.fromEntries(
          Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]),
        ),
        body: bounded(res.body, responseBound(url, limits), url.origin, refuse),
      };
    },
  };
}

function redirectMessage(from: URL, location: string | undefined): string {
  let where = 'elsewhere';
  try {
    const to = new URL(location ?? '', from);
    where = to.origin === from.origin ? `another path on ${to.origin}` : to.origin;
  } catch {}
  return `${from.origin} redirected to ${where}; redirects are not followed (credentials never follow one): set url to the repository's own address`;
}

/** What a response to `url` may hold, and what it is called when it holds more (the SSH transport's stand-in URLs too). */
export function responseBound(url: URL, limits: GitHttpLimits): { max: number; what: string; why: string } {
  if (url.pathname.endsWith('/info/refs'))
    return {
      max: limits.maxRefsBytes,
      what: 'a ref advertisement',
      why: 'a repository with this many branches and tags is not written back (every ref is held in memory); keep the values file in a repository with fewer refs',
    };
  if (url.pathname.endsWith('/git-receive-pack'))
    return {
      max: limits.maxPushAnswerBytes,
      what: 'an answer to the push',
      why: 'so much server output is not read (did the push land? the next write-back will tell)',
    };
  return {
    max: limits.maxResponseBytes,
    what: 'a pack',
    why: "a branch whose tip is this large is not written back (a depth-1 fetch brings the whole tree, held in the operator's memory); keep the values file in a smaller repository or branch",
  };
}

const mib = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`;

export async function collect(body: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks;
}

/** `body`, failing (and calling `refuse`) once it passes its bound. */
export async function* bounded(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  bound: { max: number; what: string; why: string },
  origin: string,
  refuse: (failure: GitFailure) => void,
): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > bound.max) {
      const failure = new GitFailure(
        'GitUnsupported',
        `${origin} sent ${bound.what} over ${mib(bound.max)}: ${bound.why}`,
      );
      refuse(failure);
      throw failure;
    }
    yield chunk;
  }
}
