// The trigger receiver: `POST /hooks/<namespace>/<name>` signed with the release's token (see
// contract.ts) asks for an export now, exactly as a new `staticexport.dev/requested-at` value
// does. Every refusal happens before any write; the cheap checks (method, path, size, headers,
// timestamp) before anything is read from the API server. Strangers cannot lock a release out:
// only a call that passes the signature check uses the release's budget, and the reads that
// unverified calls cause have bounds of their own (see Lookups and UNVERIFIED_LOOKUPS_*). The
// token never leaves this module: not in responses, logs or events.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestLimiter } from '../api/request-limiter.ts';
import {
  GROUP_VERSION,
  REQUESTED_AT_ANNOTATION,
  SER_KIND,
  SER_PLURAL,
  type StaticExportRelease,
} from '../crd/index.ts';
import type { EventReason } from '../crd/reasons.ts';
import type { Logger } from '../log.ts';
import { registerSecret } from '../redact.ts';
import type { EventSink } from '../runtime/events.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import {
  HOOK_PATH_PREFIX,
  isSignatureHeader,
  MAX_BODY_BYTES,
  MAX_CLOCK_SKEW_S,
  normalizeToken,
  parseTimestamp,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verify,
  withinWindow,
} from './contract.ts';

// Not an `import` statement: node:http's ES module wrapper loads undici (see http.ts).
const { createServer } = process.getBuiltinModule('node:http');

const MAX_TRACKED_KEYS = 10_000;
const LOOKUP_TTL_MS = 10_000;
/**
 * API reads that calls not yet verified may cause (an unknown name, or a release not looked up in
 * the last LOOKUP_TTL_MS): per source address and in all. Past them a caller gets 429 before
 * anything is read; a release already known is looked up again regardless, at most once per
 * LOOKUP_TTL_MS, so its valid calls are verified whatever a stranger sends.
 */
export const UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE = 30;
export const UNVERIFIED_LOOKUPS_PER_MINUTE = 300;

export interface TriggerReceiverOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  kube: Pick<KubeClient, 'get' | 'mergePatch'>;
  logger: Logger;
  events: EventSink<EventReason>;
  /** Namespaces the operator watches; empty for all. Calls for others get 404. */
  namespaces: readonly string[];
  /** Verified calls per release and minute; more get 429. */
  requestsPerMinute: number;
  now?: () => number;
}

export interface TriggerReceiver {
  port: number;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  message: string;
  /** Why, for the log (the caller sees only `message`). */
  reason: string;
  headers?: Record<string, string>;
  requestedAt?: string;
}

const reply = (status: number, reason: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  reason,
  message,
  ...(headers ? { headers } : {}),
});

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface CallHead {
  method: string | undefined;
  url: string | undefined;
  contentLength: string | undefined;
  signature: string | undefined;
  timestamp: string | undefined;
}

export interface Admitted {
  namespace: string;
  name: string;
  timestamp: string;
  signature: string;
}

const unknownRelease = (namespace: string, name: string) =>
  reply(404, 'UnknownRelease', `no StaticExportRelease ${namespace}/${name} accepts triggers here`);

/** The checks that need nothing but the request line and headers: they cost no API call. */
export function admit(head: CallHead, namespaces: readonly string[], nowMs: number): Admitted | Reply {
  const path = (head.url ?? '').split('?')[0] ?? '';
  const parts = path.startsWith(HOOK_PATH_PREFIX) ? path.slice(HOOK_PATH_PREFIX.length).split('/') : [];
  const [namespace, name] = parts;
  if (parts.length !== 2 || !namespace || !name || !NAMESPACE.test(namespace) || !NAME.test(name)) {
    return reply(404, 'NotAHook', 'not found: triggers are POST /hooks/<namespace>/<name>');
  }
  if (head.method !== 'POST') {
    return reply(405, 'MethodNotAllowed', 'triggers are POST requests', { allow: 'POST' });
  }
  if (namespaces.length && !namespaces.includes(namespace)) return unknownRelease(namespace, name);
  if (Number(head.contentLength ?? 0) > MAX_BODY_BYTES) {
    return reply(413, 'BodyTooLarge', `the body must be at most ${MAX_BODY_BYTES} bytes`);
  }
  const ts = parseTimestamp(head.timestamp);
  if (!isSignatureHeader(head.signature) || ts === undefined || head.timestamp === undefined) {
    return reply(
      401,
      'Unsigned',
      `sign the call: ${TIMESTAMP_HEADER}: <Unix seconds> and ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the release's token>`,
    );
  }
  if (!withinWindow(ts, nowMs)) {
    return reply(
      401,
      'TimestampOutsideWindow',
      `${TIMESTAMP_HEADER} is more than ${MAX_CLOCK_SKEW_S / 60} minutes from the receiver's clock: a replayed call, or a wrong clock`,
    );
  }
  return { namespace, name, timestamp: head.timestamp, signature: head.signature.toLowerCase() };
}

/** Signatures accepted within the window, per process: the same call sent again is refused. */
class SeenSignatures {
  private readonly until = new Map<string, number>();
  has(signature: string, nowMs: number): boolean {
    for (const [s, t] of this.until) if (t < nowMs) this.until.delete(s);
    return this.until.has(signature);
  }
  add(signature: string, timestamp: number): void {
    // Past this the window refuses it anyway.
    this.until.set(signature, (timestamp + MAX_CLOCK_SKEW_S) * 1000);
  }
}

/** Request limits by key, dropped once idle so that unknown keys cannot grow the map for long. */
class Limits {
  private readonly limiters = new Map<string, RequestLimiter>();
  private readonly perMinute: number;
  private readonly now: () => number;
  constructor(perMinute: number, now: () => number) {
    this.perMinute = perMinute;
    this.now = now;
  }
  private limiter(key: string): RequestLimiter {
    if (this.limiters.size >= MAX_TRACKED_KEYS) {
      for (const [k, l] of this.limiters) if (l.idle()) this.limiters.delete(k);
    }
    let limiter = this.limiters.get(key);
    if (!limiter) {
      limiter = new RequestLimiter(this.perMinute, this.now);
      this.limiters.set(key, limiter);
    }
    return limiter;
  }
  /** 0: go ahead; otherwise milliseconds until the key takes another call. */
  tryTake(key: string): number {
    return this.limiter(key).tryTake();
  }
  /** Like tryTake, without taking. */
  delayMs(key: string): number {
    return this.limiters.get(key)?.delayMs() ?? 0;
  }
}

/** What the API server said of a release, as a call is checked against it. */
type Lookup =
  | { kind: 'unknown' }
  | { kind: 'noToken'; release: StaticExportRelease; why: string }
  | { kind: 'found'; release: StaticExportRelease; token: string };

/**
 * Lookups kept for LOOKUP_TTL_MS: a flood of calls for one release costs no API read after the
 * first, forged or not. A release's new token is therefore taken at most that long after it is set.
 */
class Lookups {
  private readonly entries = new Map<string, { lookup: Lookup; until: number }>();
  private readonly now: () => number;
  constructor(now: () => number) {
    this.now = now;
  }
  /** The lookup while it is fresh; `known` says whether the last one found the release. */
  get(key: string): { fresh?: Lookup; known: boolean } {
    const entry = this.entries.get(key);
    if (!entry) return { known: false };
    const known = entry.lookup.kind !== 'unknown';
    return entry.until > this.now() ? { fresh: entry.lookup, known } : { known };
  }
  set(key: string, lookup: Lookup): void {
    const now = this.now();
    if (this.entries.size >= MAX_TRACKED_KEYS) {
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
      // Still full of fresh entries: the oldest go first.
      for (const k of this.entries.keys()) {
        if (this.entries.size < MAX_TRACKED_KEYS) break;
        this.entries.delete(k);
      }
    }
    this.entries.delete(key);
    this.entries.set(key, { lookup, until: now + LOOKUP_TTL_MS });
  }
  forget(key: string): void {
    this.entries.delete(key);
  }
}

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function startTriggerReceiver(o: TriggerReceiverOptions): Promise<TriggerReceiver> {
  const now = o.now ?? Date.now;
  const log = o.logger.child({ component: 'trigger' });
  const releaseLimits = new Limits(o.requestsPerMinute, now);
  const addressLimits = new Limits(UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE, now);
  const allLookups = new RequestLimiter(UNVERIFIED_LOOKUPS_PER_MINUTE, now);
  const lookups = new Lookups(now);
  const seen = new Map<string, SeenSignatures>();

  /** The release and its token, as the API server has them now. */
  async function lookUp(namespace: string, name: string): Promise<Lookup> {
    let release: StaticExportRelease;
    try {
      release = await o.kube.get<StaticExportRelease>(
        resourcePath(GROUP_VERSION, SER_PLURAL, namespace, name),
      );
    } catch (e) {
      if (isNotFound(e)) return { kind: 'unknown' };
      throw e;
    }
    const ref = release.spec?.trigger?.tokenSecretRef;
    if (!ref) return { kind: 'unknown' };
    const noToken = (why: string): Lookup => ({ kind: 'noToken', release, why });
    try {
      const secret = await o.kube.get<{ data?: Record<string, string> }>(
        resourcePath('v1', 'secrets', namespace, ref.name),
      );
      const raw = secret.data?.[ref.key];
      if (raw === undefined) return noToken(`Secret ${namespace}/${ref.name} has no key ${ref.key}`);
      const token = normalizeToken(Buffer.from(raw, 'base64').toString('utf8'));
      if (!token) return noToken(`Secret ${namespace}/${ref.name} key ${ref.key} is empty`);
      registerSecret(token);
      return { kind: 'found', release, token };
    } catch (e) {
      if (isNotFound(e)) return noToken(`Secret ${namespace}/${ref.name} does not exist`);
      throw e;
    }
  }

  /** The release's lookup, or a refusal when reading it would pass a bound on unverified reads. */
  async function lookupFor(
    key: string,
    remote: string,
    namespace: string,
    name: string,
  ): Promise<Lookup | Reply> {
    const cached = lookups.get(key);
    if (cached.fresh) return cached.fresh;
    if (!cached.known) {
      const wait = Math.max(addressLimits.delayMs(remote), allLookups.delayMs());
      if (wait > 0) {
        const seconds = Math.ceil(wait / 1000);
        return reply(
          429,
          'TooManyUnverified',
          `too many calls for releases this receiver does not know: try again in ${seconds} s`,
          { 'retry-after': String(seconds) },
        );
      }
      addressLimits.tryTake(remote);
      allLookups.tryTake();
    }
    const lookup = await lookUp(namespace, name);
    lookups.set(key, lookup);
    return lookup;
  }

  async function handle(req: IncomingMessage, remote: string): Promise<Reply> {
    const head: CallHead = {
      method: req.method,
      url: req.url,
      contentLength: req.headers['content-length'],
      signature: req.headers[SIGNATURE_HEADER] as string | undefined,
      timestamp: req.headers[TIMESTAMP_HEADER] as string | undefined,
    };
    const admitted = admit(head, o.namespaces, now());
    if ('status' in admitted) return admitted;
    const { namespace, name } = admitted;
    const key = `${namespace}/${name}`;
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (e) {
      if (e instanceof BodyTooLarge)
        return reply(413, 'BodyTooLarge', `the body must be at most ${MAX_BODY_BYTES} bytes`);
      throw e;
    }
    const lookup = await lookupFor(key, remote, namespace, name);
    if ('status' in lookup) return lookup;
    if (lookup.kind === 'unknown') return unknownRelease(namespace, name);
    if (lookup.kind === 'noToken') {
      log.warn({ namespace, name, remote, why: lookup.why }, 'trigger refused: no token to check it with');
      return reply(401, 'NoToken', 'signature does not match');
    }
    if (!verify(lookup.token, admitted.timestamp, body, admitted.signature)) {
      return reply(401, 'BadSignature', 'signature does not match');
    }
    const signatures = seen.get(key) ?? new SeenSignatures();
    seen.set(key, signatures);
    if (signatures.has(admitted.signature, now())) {
      return reply(401, 'Replayed', 'this signed call was already received: sign each call anew');
    }
    // Only verified calls reach the release's own budget: forged ones cannot use it up.
    const wait = releaseLimits.tryTake(key);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      return reply(
        429,
        'RateLimited',
        `${key} takes at most ${o.requestsPerMinute} calls a minute: try again in ${seconds} s`,
        { 'retry-after': String(seconds) },
      );
    }
    signatures.add(admitted.signature, Number(admitted.timestamp));
    const requestedAt = new Date(now()).toISOString();
    try {
      await o.kube.mergePatch(resourcePath(GROUP_VERSION, SER_PLURAL, namespace, name), {
        metadata: { annotations: { [REQUESTED_AT_ANNOTATION]: requestedAt } },
      });
    } catch (e) {
      if (isNotFound(e)) {
        lookups.forget(key);
        return unknownRelease(namespace, name);
      }
      throw e;
    }
    await o.events
      .emit(
        { apiVersion: GROUP_VERSION, kind: SER_KIND, metadata: lookup.release.metadata },
        'Normal',
        'TriggerAccepted',
        `A signed trigger call asked for an export (${REQUESTED_AT_ANNOTATION}: ${requestedAt})`,
      )
      .catch((e: unknown) => log.warn({ err: e, namespace, name }, 'trigger event not recorded'));
    return { ...reply(202, 'Accepted', `export requested for ${key}`), requestedAt };
  }

  const respond = (res: ServerResponse, r: Reply) => {
    res.writeHead(r.status, {
      'content-type': 'application/json',
      // A refused body may still be arriving: do not keep the connection for another call.
      ...(r.status === 413 ? { connection: 'close' } : {}),
      ...r.headers,
    });
    res.end(
      `${JSON.stringify({ message: r.message, ...(r.requestedAt ? { requestedAt: r.requestedAt } : {}) })}\n`,
    );
  };

  const server = createServer((req, res) => {
    const remote = req.socket.remoteAddress ?? '';
    handle(req, remote).then(
      (r) => {
        const fields = { remote, path: (req.url ?? '').split('?')[0], status: r.status, reason: r.reason };
        if (r.status === 202) log.info(fields, 'trigger accepted');
        else log.warn(fields, 'trigger refused');
        respond(res, r);
      },
      (e: unknown) => {
        log.error({ err: e, remote, path: (req.url ?? '').split('?')[0] }, 'trigger failed');
        respond(res, reply(503, 'Unavailable', 'the release could not be read or updated: try again'));
      },
    );
  });
  // A trigger is one small request: a client that dawdles is cut off.
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log.info({ port, requestsPerMinute: o.requestsPerMinute }, 'trigger receiver listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
