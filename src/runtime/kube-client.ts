// A thin Kubernetes REST client: kubeconfig.ts finds the server and credentials (files, in-cluster,
// token files; exec plugins through client-node); requests go through one connection pool
// (src/http.ts) so we control timeouts, pagination, patch types (merge, server-side apply, /status)
// and the watch stream ourselves.
import { HttpAgent, readText } from '../http.ts';
import { type KubeAccess, loadKubeAccess } from './kubeconfig.ts';

export const FIELD_MANAGER = 'static-export-operator';
const HEADER_TTL_MS = 60_000;
/** Longest pause between body chunks of a non-watch request (a list page of 500 objects included). */
const DEFAULT_BODY_TIMEOUT_MS = 60_000;
/**
 * Largest answer read (and watch event): the objects listed here (releases, workloads, pods, the
 * metadata of Secrets) take kilobytes each, so a page of 500 is a few megabytes. A broken or hostile
 * server sending more is refused while reading, before it costs the memory.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** The pages of one list together read at most this many answers' worth. */
const LIST_BUDGET_ANSWERS = 4;
/** Most pages of one list: half a million objects at 500 a page; a `continue` past that never ends. */
export const MAX_LIST_PAGES = 1000;

interface KubeClientOptions {
  /** Body timeout of every request but watches. Default 60 s. */
  bodyTimeoutMs?: number;
  /** Largest answer or watch event; a list's pages together get four times this. Default 64 MiB. */
  maxResponseBytes?: number;
  /** Where KUBECONFIG and HOME are read (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
}

export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
  }
}

/** An answer the client refuses to read on: too large, or a list that does not end. Names the server. */
export class KubeResponseError extends Error {
  override name = 'KubeResponseError';
}

export const isNotFound = (e: unknown) => e instanceof KubeApiError && e.status === 404;
export const isForbidden = (e: unknown) => e instanceof KubeApiError && e.status === 403;
export const isConflict = (e: unknown) => e instanceof KubeApiError && e.status === 409;
export const isGone = (e: unknown) => e instanceof KubeApiError && e.status === 410;

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface ObjectList<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOpts {
  body?: unknown;
  contentType?: string;
  query?: Query;
  signal?: AbortSignal;
  accept?: string;
  /** A tighter bound than the client's (a list's later pages), what to say past it, and the bytes read. */
  answer?: { maxBytes: number; tooLarge: string; read: (bytes: number) => void };
}

// Metadata only (client-go's metadata client): lists and watches of Secrets carry no data.
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export class KubeClient {
  readonly server: string;
  /** The kubeconfig's default namespace (kubectl's when -n is not given), if it names one. */
  readonly namespace: string | undefined;
  private readonly access: KubeAccess;
  private readonly http: HttpAgent;
  private readonly maxResponseBytes: number;
  private headers: Record<string, string> = {};
  private headersAt = 0;

  private constructor(access: KubeAccess, http: HttpAgent, maxResponseBytes: number) {
    this.access = access;
    this.server = access.server.replace(/\/$/, '');
    this.namespace = access.namespace;
    this.http = http;
    this.maxResponseBytes = maxResponseBytes;
  }

  /** From a kubeconfig file, or the default chain (KUBECONFIG, ~/.kube/config, in-cluster). */
  static async create(kubeconfigPath?: string, options: KubeClientOptions = {}): Promise<KubeClient> {
    const access = await loadKubeAccess(kubeconfigPath, options.env);
    const http = new HttpAgent({
      tls: access.tls,
      connectTimeoutMs: 10_000,
      headersTimeoutMs: 30_000,
      // A request whose body stalls fails instead of holding a worker; watches turn this off.
      bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
      maxSockets: 32,
    });
    return new KubeClient(access, http, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  }

  private async authHeaders(): Promise<Record<string, string>> {
    // Token files and exec credentials rotate: compute the headers again once a minute.
    if (Date.now() - this.headersAt > HEADER_TTL_MS) {
      this.headers = await this.access.headers();
      this.headersAt = Date.now();
    }
    return this.headers;
  }

  private url(path: string, query?: Query): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return `${this.server}${path}${qs ? `?${qs}` : ''}`;
  }

  async request<T>(method: string, path: string, opts: RequestOpts = {}): Promise<T> {
    const body =
      opts.body === undefined
        ? undefined
        : typeof opts.body === 'string'
          ? opts.body
          : JSON.stringify(opts.body);
    const res = await this.http.request(this.url(path, opts.query), {
      method,
      headers: {
        ...(await this.authHeaders()),
        accept: opts.accept ?? 'application/json',
        ...(body !== undefined ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const maxBytes = opts.answer?.maxBytes ?? this.maxResponseBytes;
    const tooLarge = opts.answer?.tooLarge ?? `answered ${method} ${path} with more than ${mib(maxBytes)}`;
    const text = await readText(res.body, maxBytes, () => this.refused(tooLarge));
    opts.answer?.read(Buffer.byteLength(text));
    if (res.statusCode >= 400) throw toApiError(res.statusCode, text, `${method} ${path}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private refused(what: string): KubeResponseError {
    return new KubeResponseError(`the Kubernetes API at ${this.server} ${what}: refused`);
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, signal ? { signal } : {});
  }

  /**
   * All items across pages; the resourceVersion is the first page's, as a watch starting point. A
   * server whose pages do not end (a `continue` token again, more than MAX_LIST_PAGES) or add up to
   * more than the list's budget is refused.
   */
  async list<T>(
    path: string,
    query: Query = {},
    pageSize = 500,
    signal?: AbortSignal,
    accept?: string,
  ): Promise<ObjectList<T>> {
    const items: T[] = [];
    const seen = new Set<string>();
    const budget = this.maxResponseBytes * LIST_BUDGET_ANSWERS;
    let read = 0;
    let cont: string | undefined;
    let resourceVersion = '';
    for (let pages = 1; ; pages++) {
      const maxBytes = Math.min(this.maxResponseBytes, budget - read);
      const page = await this.request<ObjectList<T>>('GET', path, {
        query: { ...query, limit: pageSize, continue: cont },
        ...(signal ? { signal } : {}),
        ...(accept ? { accept } : {}),
        answer: {
          maxBytes,
          tooLarge:
            maxBytes < this.maxResponseBytes
              ? `answered the list GET ${path} with more than ${mib(budget)} in ${pages} pages`
              : `answered GET ${path} with more than ${mib(maxBytes)}`,
          read: (bytes) => {
            read += bytes;
          },
        },
      });
      // An empty PartialObjectMetadataList comes with `items: null`. No spread: a page may hold more
      // items than a call takes arguments.
      for (const item of page.items ?? []) items.push(item);
      resourceVersion ||= page.metadata.resourceVersion;
      cont = page.metadata.continue || undefined;
      if (cont === undefined) break;
      if (seen.has(cont))
        throw this.refused(
          `sent an earlier page's continue token again on page ${pages} of the list GET ${path}: the list would never end`,
        );
      if (pages >= MAX_LIST_PAGES)
        throw this.refused(`kept the list GET ${path} going past ${MAX_LIST_PAGES} pages`);
      seen.add(cont);
    }
    return { metadata: { resourceVersion }, items };
  }

  create<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.request<T>('POST', path, {
      body,
      query: { fieldManager: FIELD_MANAGER },
      ...(signal ? { signal } : {}),
    });
  }

  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.request<T>('PATCH', path, {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  /**
   * Server-side apply as the operator's field manager (also for `/status`). A
   * `metadata.resourceVersion` in `object` is a precondition: 409 if the object changed since.
   */
  apply<T>(path: string, object: unknown, force = true, signal?: AbortSignal): Promise<T> {
    return this.request<T>('PATCH', path, {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force },
      ...(signal ? { signal } : {}),
    });
  }

  delete(path: string, query: Query = {}): Promise<unknown> {
    return this.request('DELETE', path, { query });
  }

  /** The watch stream as async iterable; ends when the server closes it or `signal` aborts. */
  async *watch<T>(
    path: string,
    query: Query,
    signal: AbortSignal,
    accept = 'application/json',
  ): AsyncGenerator<WatchEvent<T>> {
    const res = await this.http.request(
      this.url(path, { ...query, watch: true, allowWatchBookmarks: true }),
      {
        method: 'GET',
        headers: { ...(await this.authHeaders()), accept },
        signal,
        // Watches stay open for minutes; the informer's watchdog, not a body timeout, decides when one is dead.
        bodyTimeoutMs: 0,
      },
    );
    const max = this.maxResponseBytes;
    const tooLarge = (what: string) =>
      this.refused(`answered WATCH ${path} with more than ${mib(max)}${what}`);
    if (res.statusCode >= 400)
      throw toApiError(res.statusCode, await readText(res.body, max, () => tooLarge('')), `WATCH ${path}`);
    // A multi-byte character may be split across chunks: decode as a stream.
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line) yield JSON.parse(line) as WatchEvent<T>;
        nl = buffered.indexOf('\n');
      }
      // An event that does not end is refused before it holds the memory (leaving the loop closes the stream).
      if (buffered.length > max) throw tooLarge(' in one event');
    }
  }

  /** List and watch returning only each object's metadata (for informers that need no content). */
  metadataOnly(): Pick<KubeClient, 'list' | 'watch'> {
    return {
      list: (path, query, pageSize, signal) => this.list(path, query, pageSize, signal, METADATA_LIST),
      watch: (path, query, signal) => this.watch(path, query, signal, METADATA_WATCH),
    };
  }

  async close(): Promise<void> {
    this.http.close();
  }
}

const mib = (bytes: number) => `${Number((bytes / 2 ** 20).toFixed(1))} MiB`;

function toApiError(status: number, text: string, what: string): KubeApiError {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    return new KubeApiError(status, s.reason ?? String(status), s.message ?? `${what}: ${status}`);
  } catch {
    return new KubeApiError(status, String(status), `${what}: ${status} ${text.slice(0, 200)}`);
  }
}

/** REST paths of namespaced resources: core (`v1`) or grouped (`apps/v1`). */
export function resourcePath(apiVersion: string, plural: string, namespace?: string, name?: string): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}${namespace ? `/namespaces/${namespace}` : ''}/${plural}${name ? `/${name}` : ''}`;
}
