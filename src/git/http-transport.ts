// isomorphic-git's HTTP client, over the process's own HTTP stack (src/http.ts) instead of the
// library's simple-get one, for three guarantees: credentials go only to the repository's own
// origin; a redirect is never followed (simple-get follows it, and a token would follow a
// redirect to the new host's scheme, port or host); every response is bounded in time and size.
import { rootCertificates } from 'node:tls';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { errorCode, HttpAgent } from '../http.ts';
import { GitFailure } from './types.ts';

export interface GitHttpLimits {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Longest silence while a body streams. */
  bodyTimeoutMs: number;
  /**
   * Largest response body: a ref advertisement or a pack. isomorphic-git holds a fetched pack in
   * memory several times over (about 5.5 times the tip's size at peak, docs/benchmarks), so this
   * is what keeps a write-back inside the operator's memory limit whatever the repository.
   */
  maxResponseBytes: number;
}

export const GIT_HTTP_LIMITS: GitHttpLimits = {
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  maxResponseBytes: 32 * 1024 * 1024,
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
 * `signal` aborts every request (isomorphic-git passes none to a fetch). `caCert` (PEM) is
 * trusted besides the public roots, for this transport's connections only.
 */
export function gitHttpClient(
  origin: string,
  authorization: string | undefined,
  limits: GitHttpLimits,
  signal: AbortSignal,
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
          throw new GitFailure(
            'GitUnreachable',
            `${origin} presented a TLS certificate no trusted CA signed [${code}]: ${caCert === undefined ? 'put the CA that signed it (PEM) in the Secret as ca.crt, as for Flux' : "the Secret's ca.crt did not sign it either: put the right CA there"}`,
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
        body: bounded(res.body, limits.maxResponseBytes, url.origin),
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

export async function collect(body: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks;
}

/** `body`, failing once it passes `max` bytes (a branch tip too large to hold). */
export async function* bounded(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  max: number,
  /** The repository, as messages name it. */
  origin: string,
): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) {
      throw new GitFailure(
        'GitUnsupported',
        `${origin} sent a response over ${Math.round(max / 1024 / 1024)} MiB: a branch whose tip is this large is not written back (a depth-1 fetch brings the whole tree, held in the operator's memory); keep the values file in a smaller repository or branch`,
      );
    }
    yield chunk;
  }
}
