// Client of the OCI distribution API (https://github.com/opencontainers/distribution-spec): what
// `mirror push/load/sync` need to write images and what a puller inside the gap needs to read
// them. One keep-alive pool (src/http.ts: Node's http/https, the process's one HTTP stack) per
// registry; auth follows the WWW-Authenticate challenge (anonymous,
// Basic, Bearer token per scope). Nothing secret (passwords, tokens, upload locations, redirect
// targets) reaches a message: errors name the method and the API path only.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpAgent, readBytes, readText } from '../http.ts';
import { registerSecret } from '../redact.ts';
import { basicAuthorization, type Challenge, parseChallenge, type RegistryCredentials } from './auth.ts';
import { OciError } from './errors.ts';
import { isDigest, isLoopbackRegistry } from './reference.ts';

export const MEDIA_TYPES = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
} as const;

const MANIFEST_ACCEPT = [
  MEDIA_TYPES.ociManifest,
  MEDIA_TYPES.ociIndex,
  MEDIA_TYPES.dockerManifest,
  MEDIA_TYPES.dockerList,
].join(', ');

/** A content-addressed object: what a manifest points at. */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** Content a blob upload reads; `open` may be called more than once (a retried or resumed upload). */
export interface BlobSource {
  digest: string;
  size: number;
  /** The bytes from `offset` (default 0) to the end. */
  open(offset?: number): Readable | AsyncIterable<Uint8Array>;
  /** Bytes already sent in an open upload (`stageBlob`): pushing commits it instead of reading `open`. */
  staged?: StagedUpload;
}

/**
 * An upload whose bytes have been sent but not committed: the registry holds them under no digest
 * (nothing can reference them) until `commit`; `cancel` drops them. Either settles it for good.
 */
export interface StagedUpload {
  commit(digest: string): Promise<void>;
  cancel(): Promise<void>;
}

export type UploadOutcome = 'exists' | 'mounted' | 'uploaded';

export interface RegistryClientOptions {
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
  /** Blobs above this size go up in PATCH chunks of this size; smaller ones in one PUT. Default 64 MiB. */
  chunkSize?: number;
  /** Per-request wait for an answer and for each silence in a body. Default 60 s. */
  timeoutMs?: number;
  /** Retries of idempotent requests on network errors, 429 and 5xx. Default 3. */
  retries?: number;
  /** Called for each blob request that moves bytes (uploads, mounts), e.g. to count them. */
  onBlobTransfer?: (event: { repository: string; digest: string; outcome: UploadOutcome }) => void;
}

type Body = Buffer | string | Readable | AsyncIterable<Uint8Array> | undefined;

interface CallOptions {
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
}

interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/** Reads a small body to its end (so the connection goes back to the pool). */
async function drain(body: IncomingMessage): Promise<void> {
  for await (const _ of body) {
    // discarded
  }
}

// Manifests and token answers are small; a registry sending more is not followed.
const MAX_JSON_BYTES = 4 * 1024 * 1024;

function tooLarge(): OciError {
  return new OciError('Protocol', `registry answer over ${MAX_JSON_BYTES} bytes`);
}

const DEFAULT_CHUNK = 64 * 1024 * 1024;
const MAX_REDIRECTS = 5;

function header(res: Response, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sha256(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

function isReplayable(body: Body): boolean {
  return body === undefined || typeof body === 'string' || Buffer.isBuffer(body);
}

/** The registry's error text (`{"errors":[{"code","message"}]}`), short. */
async function errorText(res: Response): Promise<string> {
  try {
    const text = await readText(res.body, MAX_JSON_BYTES, tooLarge);
    const parsed = JSON.parse(text) as { errors?: { code?: string; message?: string }[] };
    const first = parsed.errors?.[0];
    if (first) return `${first.code ?? ''}${first.message ? `: ${first.message}` : ''}`.slice(0, 300);
    return text.slice(0, 200);
  } catch {
    return '';
  }
}

/** Splits one stream into consecutive pieces of `size` bytes, each consumed as its own body. */
class ChunkedReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private pending: Uint8Array | undefined;
  done = false;

  constructor(source: Readable | AsyncIterable<Uint8Array>) {
    this.iterator = (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  }

  async *piece(size: number): AsyncGenerator<Uint8Array> {
    let left = size;
    while (left > 0) {
      let chunk = this.pending;
      this.pending = undefined;
      if (!chunk) {
        const next = await this.iterator.next();
        if (next.done) {
          this.done = true;
          return;
        }
        chunk = next.value;
      }
      if (chunk.length > left) {
        this.pending = chunk.subarray(left);
        chunk = chunk.subarray(0, left);
      }
      left -= chunk.length;
      yield chunk;
    }
  }
}

/**
 * A blob's bytes, counted and hashed on the way: fails as soon as there are more than `size`, and
 * at the end (or when the connection closes early) when there were fewer or their digest is not
 * `digest`. A generator reads nothing until its reader asks, so no failure can come before
 * someone listens for it.
 */
async function* verified(
  body: IncomingMessage,
  digest: string,
  size: number | undefined,
  what: string,
): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let received = 0;
  const mismatch = (why: string) => new OciError('ContentMismatch', `${what}: ${why}`);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (size !== undefined && received > size)
        throw mismatch(`the registry sent more than its ${size} bytes`);
      hash.update(chunk);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof OciError || size === undefined || received >= size) throw error;
    throw mismatch(`the connection closed after ${received} of its ${size} bytes`);
  }
  if (size !== undefined && received < size)
    throw mismatch(`the registry sent ${received} of its ${size} bytes`);
  const actual = `sha256:${hash.digest('hex')}`;
  if (actual !== digest)
    throw mismatch(`the registry sent content with digest ${actual}, expected ${digest}`);
}

export class RegistryClient {
  readonly registry: string;
  readonly baseUrl: string;
  private readonly agent: HttpAgent;
  private readonly credentials: RegistryCredentials | undefined;
  private readonly chunkSize: number;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly onBlobTransfer: RegistryClientOptions['onBlobTransfer'];
  /** The challenge scheme learned from the registry (undefined until a 401 or when anonymous works). */
  private challenge: Challenge | undefined;
  /** Bearer tokens by scope key. */
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  constructor(options: RegistryClientOptions) {
    this.registry = options.registry;
    const plain =
      options.plainHttp === true || (options.ca === undefined && isLoopbackRegistry(options.registry));
    this.baseUrl = `${plain ? 'http' : 'https'}://${options.registry}`;
    this.credentials = options.credentials;
    if (options.credentials) registerSecret(options.credentials.password);
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 3;
    this.onBlobTransfer = options.onBlobTransfer;
    this.agent = new HttpAgent({
      connectTimeoutMs: Math.min(30_000, this.timeoutMs),
      headersTimeoutMs: this.timeoutMs,
      bodyTimeoutMs: this.timeoutMs,
      ...(options.ca === undefined ? {} : { tls: { ca: options.ca.toString() } }),
    });
  }

  async close(): Promise<void> {
    this.agent.close();
  }

  // ---- reading ----

  /** The manifest digest a tag (or digest) points to, or undefined when there is none. */
  async resolve(repository: string, reference: string): Promise<Descriptor | undefined> {
    const res = await this.call({
      method: 'HEAD',
      path: `/v2/${repository}/manifests/${reference}`,
      scope: [`repository:${repository}:pull`],
      headers: { accept: MANIFEST_ACCEPT },
      expect: [200, 404],
      what: `resolve ${repository}:${reference}`,
    });
    await drain(res.body);
    if (res.status === 404) return undefined;
    const digest = header(res, 'docker-content-digest');
    const mediaType = header(res, 'content-type') ?? MEDIA_TYPES.ociManifest;
    const size = Number(header(res, 'content-length') ?? Number.NaN);
    if (digest && isDigest(digest) && Number.isFinite(size)) return { mediaType, digest, size };
    // Not every registry sends the digest on HEAD: the content tells.
    const manifest = await this.getManifest(repository, reference);
    return (
      manifest && { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.bytes.length }
    );
  }

  /** The manifest's bytes (exactly as stored: its digest is over them), or undefined when absent. */
  async getManifest(
    repository: string,
    reference: string,
  ): Promise<{ bytes: Buffer; digest: string; mediaType: string } | undefined> {
    const res = await this.call({
      method: 'GET',
      path: `/v2/${repository}/manifests/${reference}`,
      scope: [`repository:${repository}:pull`],
      headers: { accept: MANIFEST_ACCEPT },
      expect: [200, 404],
      what: `get manifest ${repository}:${reference}`,
    });
    if (res.status === 404) {
      await drain(res.body);
      return undefined;
    }
    const bytes = await readBytes(res.body, MAX_JSON_BYTES, tooLarge);
    const digest = sha256(bytes);
    if (isDigest(reference) && digest !== reference) {
      throw new OciError(
        'ContentMismatch',
        `get manifest ${repository}@${reference}: the registry sent another manifest (digest ${digest})`,
      );
    }
    let mediaType = header(res, 'content-type')?.split(';')[0]?.trim();
    if (!mediaType || mediaType === 'application/json') {
      try {
        mediaType = (JSON.parse(bytes.toString('utf8')) as { mediaType?: string }).mediaType;
      } catch {
        throw new OciError('Protocol', `manifest ${repository}:${reference} is not JSON`);
      }
    }
    return { bytes, digest, mediaType: mediaType ?? MEDIA_TYPES.ociManifest };
  }

  /** The blob's size when the repository has it, else undefined. */
  async blobSize(repository: string, digest: string): Promise<number | undefined> {
    const res = await this.call({
      method: 'HEAD',
      path: `/v2/${repository}/blobs/${digest}`,
      scope: [`repository:${repository}:pull`],
      expect: [200, 404],
      what: `check blob ${repository}@${digest}`,
    });
    await drain(res.body);
    if (res.status === 404) return undefined;
    const size = Number(header(res, 'content-length'));
    return Number.isFinite(size) ? size : 0;
  }

  /**
   * The blob's bytes as a stream that fails when they are not `digest` (and, when given, `size`
   * bytes): at the end, or as soon as there are too many. A failure before anything reads the
   * stream waits for its reader, never an unhandled 'error'.
   */
  async getBlob(repository: string, digest: string, size?: number): Promise<Readable> {
    const what = `get blob ${repository}@${digest}`;
    const res = await this.call({
      method: 'GET',
      path: `/v2/${repository}/blobs/${digest}`,
      scope: [`repository:${repository}:pull`],
      expect: [200],
      what,
    });
    const length = Number(header(res, 'content-length') ?? Number.NaN);
    if (size !== undefined && Number.isFinite(length) && length !== size) {
      res.body.destroy();
      throw new OciError(
        'ContentMismatch',
        `${what}: the registry announced ${length} bytes, its descriptor says ${size}`,
      );
    }
    const expected = size ?? (Number.isFinite(length) ? length : undefined);
    return Readable.from(verified(res.body, digest, expected, what), { objectMode: false });
  }

  /** All tags of a repository (empty when the repository does not exist). */
  async listTags(repository: string): Promise<string[]> {
    const tags: string[] = [];
    let path: string | undefined = `/v2/${repository}/tags/list?n=1000`;
    while (path) {
      const res: Response = await this.call({
        method: 'GET',
        path,
        scope: [`repository:${repository}:pull`],
        expect: [200, 404],
        what: `list tags of ${repository}`,
      });
      if (res.status === 404) {
        await drain(res.body);
        return tags;
      }
      const body = JSON.parse(await readText(res.body, MAX_JSON_BYTES, tooLarge)) as {
        tags?: string[] | null;
      };
      tags.push(...(body.tags ?? []));
      // Link: </v2/<name>/tags/list?n=1000&last=x>; rel="next"
      const link = header(res, 'link');
      path = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1] : undefined;
    }
    return tags;
  }

  // ---- writing ----

  /**
   * Makes the blob present in `repository`: nothing when it is there already, a cross-repository
   * mount when one of `mountFrom` has it, else an upload (one PUT up to the chunk size, PATCH chunks
   * above it).
   */
  async pushBlob(repository: string, source: BlobSource, mountFrom: string[] = []): Promise<UploadOutcome> {
    if ((await this.blobSize(repository, source.digest)) !== undefined) {
      await source.staged?.cancel();
      return this.report(repository, source, 'exists');
    }
    if (source.staged) {
      await source.staged.commit(source.digest);
      return this.report(repository, source, 'uploaded');
    }
    let location: string | undefined;
    for (const from of mountFrom.filter((name) => name !== repository)) {
      const res = await this.call({
        method: 'POST',
        path: `/v2/${repository}/blobs/uploads/?mount=${encodeURIComponent(source.digest)}&from=${encodeURIComponent(from)}`,
        scope: [`repository:${repository}:pull,push`, `repository:${from}:pull`],
        expect: [201, 202],
        what: `mount blob ${source.digest} from ${from} into ${repository}`,
      });
      await drain(res.body);
      if (res.status === 201) return this.report(repository, source, 'mounted');
      // 202: the registry could not mount and opened an ordinary upload instead.
      location = this.uploadLocation(res);
      break;
    }
    location ??= await this.startUpload(repository);
    if (source.size <= this.chunkSize) {
      await this.finishUpload(repository, location, source.digest, source.open(), source.size);
    } else {
      const reader = new ChunkedReader(source.open());
      let offset = 0;
      while (offset < source.size) {
        const length = Math.min(this.chunkSize, source.size - offset);
        const res = await this.call({
          method: 'PATCH',
          path: location,
          scope: [`repository:${repository}:pull,push`],
          headers: {
            'content-type': 'application/octet-stream',
            'content-length': String(length),
            'content-range': `${offset}-${offset + length - 1}`,
          },
          body: reader.piece(length),
          expect: [202],
          what: `upload blob ${source.digest} to ${repository} (chunk at ${offset})`,
        });
        await drain(res.body);
        location = this.uploadLocation(res);
        offset += length;
      }
      await this.finishUpload(repository, location, source.digest, undefined, 0);
    }
    return this.report(repository, source, 'uploaded');
  }

  /**
   * Sends a blob whose digest and size are not known yet (bytes produced while they go up): one
   * streamed PATCH, as skopeo sends layers. The digest goes with the commit (the distribution API
   * takes it only at the final PUT), which the returned upload does once the caller knows it.
   */
  async stageBlob(repository: string, body: Readable | AsyncIterable<Uint8Array>): Promise<StagedUpload> {
    const location = await this.startUpload(repository);
    const scope = [`repository:${repository}:pull,push`];
    // Best effort: a registry keeps an abandoned upload only until it purges stale ones.
    const cancel = async (at: string) => {
      const gone = await this.call({
        method: 'DELETE',
        path: at,
        scope,
        expect: [204, 404],
        what: `cancel an upload to ${repository}`,
      }).catch(() => undefined);
      if (gone) await drain(gone.body);
    };
    let next: string;
    try {
      const res = await this.call({
        method: 'PATCH',
        path: location,
        scope,
        headers: { 'content-type': 'application/octet-stream' },
        body,
        expect: [202],
        what: `upload blob to ${repository}`,
      });
      await drain(res.body);
      next = this.uploadLocation(res);
    } catch (error) {
      await cancel(location);
      throw error;
    }
    let settled = false;
    return {
      commit: async (digest) => {
        if (settled)
          throw new OciError('Usage', `the upload of ${digest} to ${repository} is settled already`);
        settled = true;
        await this.finishUpload(repository, next, digest, undefined, 0);
      },
      cancel: async () => {
        if (settled) return;
        settled = true;
        await cancel(next);
      },
    };
  }

  /** Stores a manifest under a tag or its digest; returns its digest (checked against the registry's). */
  async putManifest(
    repository: string,
    reference: string,
    bytes: Buffer,
    mediaType: string,
  ): Promise<string> {
    const digest = sha256(bytes);
    const res = await this.call({
      method: 'PUT',
      path: `/v2/${repository}/manifests/${reference}`,
      scope: [`repository:${repository}:pull,push`],
      headers: { 'content-type': mediaType },
      body: bytes,
      expect: [201],
      what: `push manifest ${repository}:${reference}`,
    });
    await drain(res.body);
    const stored = header(res, 'docker-content-digest');
    if (stored && stored !== digest) {
      throw new OciError(
        'Protocol',
        `registry stored manifest ${repository}:${reference} as ${stored}, sent ${digest}`,
      );
    }
    return digest;
  }

  /** Deletes a manifest (and so every tag pointing to it). False when it was already gone. */
  async deleteManifest(repository: string, digest: string): Promise<boolean> {
    const res = await this.call({
      method: 'DELETE',
      path: `/v2/${repository}/manifests/${digest}`,
      scope: [`repository:${repository}:pull,push,delete`],
      expect: [202, 404],
      what: `delete manifest ${repository}@${digest}`,
    });
    await drain(res.body);
    return res.status === 202;
  }

  private report(repository: string, source: BlobSource, outcome: UploadOutcome): UploadOutcome {
    this.onBlobTransfer?.({ repository, digest: source.digest, outcome });
    return outcome;
  }

  private async startUpload(repository: string): Promise<string> {
    const res = await this.call({
      method: 'POST',
      path: `/v2/${repository}/blobs/uploads/`,
      scope: [`repository:${repository}:pull,push`],
      expect: [202],
      what: `start blob upload to ${repository}`,
    });
    await drain(res.body);
    return this.uploadLocation(res);
  }

  private async finishUpload(
    repository: string,
    location: string,
    digest: string,
    body: Body,
    length: number,
  ): Promise<void> {
    const url = new URL(location);
    url.searchParams.set('digest', digest);
    const res = await this.call({
      method: 'PUT',
      path: url.toString(),
      scope: [`repository:${repository}:pull,push`],
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(length) },
      body,
      expect: [201],
      what: `upload blob ${digest} to ${repository}`,
    });
    await drain(res.body);
  }

  private uploadLocation(res: Response): string {
    const location = header(res, 'location');
    if (!location) throw new OciError('Protocol', 'registry opened an upload without a Location header');
    return new URL(location, this.baseUrl).toString();
  }

  // ---- transport ----

  private async call(options: CallOptions): Promise<Response> {
    let attempt = 0;
    let authRetried = false;
    for (;;) {
      attempt += 1;
      let res: Response;
      try {
        res = await this.send(options);
      } catch (error) {
        if (error instanceof OciError) throw error;
        if (attempt <= this.retries && isReplayable(options.body)) {
          await sleep(200 * 2 ** (attempt - 1));
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
        throw this.authError(options, res.status, '');
      }
      const text = await errorText(res);
      if (res.status === 401 || res.status === 403) throw this.authError(options, res.status, text);
      if (
        (res.status === 429 || res.status >= 500) &&
        attempt <= this.retries &&
        isReplayable(options.body)
      ) {
        await sleep(500 * 2 ** (attempt - 1));
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

  private authError(options: CallOptions, status: number, text: string): OciError {
    const hint = this.credentials
      ? 'the credentials were refused or lack permission for this repository'
      : 'the registry wants credentials: log in with `podman login`/`docker login` (auth file), or pass --username and --password-stdin';
    return new OciError(
      'Auth',
      `${options.what}: registry ${this.registry} answered ${status}${text ? ` (${text})` : ''}: ${hint}`,
      { status },
    );
  }

  /** One request with the current authorization, following redirects (without it) for reads. */
  private async send(options: CallOptions): Promise<Response> {
    let url = options.path.startsWith('/') ? `${this.baseUrl}${options.path}` : options.path;
    const headers: Record<string, string> = { 'user-agent': 'static-export', ...options.headers };
    const authorization = await this.authorization(options.scope);
    if (authorization) headers.authorization = authorization;
    for (let redirects = 0; ; redirects++) {
      const res = await this.agent.request(url, {
        method: options.method,
        headers,
        ...(options.body === undefined ? {} : { body: options.body }),
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

  private async authorization(scope: string[]): Promise<string | undefined> {
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
    const token = await this.fetchToken(challenge, scope);
    return `Bearer ${token}`;
  }

  private async fetchToken(challenge: Challenge, scope: string[]): Promise<string> {
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
      res = await this.agent.request(url.toString(), { method: 'GET', headers });
    } catch (error) {
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
      throw this.authError({ what: `get a token for ${scope.join(' ')}` } as CallOptions, res.statusCode, '');
    }
    if (res.statusCode !== 200) {
      await drain(res.body);
      throw new OciError('Protocol', `token service of ${this.registry} answered ${res.statusCode}`, {
        status: res.statusCode,
      });
    }
    const body = JSON.parse(await readText(res.body, MAX_JSON_BYTES, tooLarge)) as {
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

/** A blob source over bytes in memory (configs, manifests, small layers). */
export function bufferSource(bytes: Buffer): BlobSource {
  return {
    digest: sha256(bytes),
    size: bytes.length,
    open: (offset = 0) => Readable.from([bytes.subarray(offset)]),
  };
}

export { sha256 as digestOf };
