// The trigger receiver: `POST /hooks/<namespace>/<name>` signed with the release's token (see
// contract.ts) asks for an export now, exactly as a new `staticexport.dev/requested-at` value
// does. Every refusal happens before any write; the cheap checks (method, path, size, headers,
// timestamp) before anything else. Strangers cannot lock a release out: a name is resolved from the
// receiver's own watch of the releases (releases.ts), so a call for an unknown name is answered from
// memory; a call for a known one costs at most a token read shared with every call for that
// release (tokens.ts); and only a call that passes the signature check uses the release's budget.
// The token never leaves this module: not in responses, logs or events.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestLimiter } from '../api/request-limiter.ts';
import { GROUP_VERSION, REQUESTED_AT_ANNOTATION, SER_KIND, SER_PLURAL } from '../crd/index.ts';
import type { EventReason } from '../crd/reasons.ts';
import type { Logger } from '../log.ts';
import type { EventSink } from '../runtime/events.ts';
import type { ListWatchClient } from '../runtime/informer.ts';
import { isNotFound, type KubeClient, resourcePath } from '../runtime/kube-client.ts';
import {
  HOOK_PATH_PREFIX,
  isSignatureHeader,
  MAX_BODY_BYTES,
  MAX_CLOCK_SKEW_S,
  parseTimestamp,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verify,
  withinWindow,
} from './contract.ts';
import { watchTriggerReleases } from './releases.ts';
import { Tokens } from './tokens.ts';

// Not an `import` statement: node:http's ES module wrapper loads undici (see http.ts).
const { createServer } = process.getBuiltinModule('node:http');

const MAX_TRACKED_KEYS = 10_000;

interface TriggerReceiverOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Watches the releases, reads token Secrets, sets the annotation. */
  kube: Pick<KubeClient, 'get' | 'mergePatch'> & ListWatchClient;
  logger: Logger;
  events: EventSink<EventReason>;
  /** Namespaces the operator watches; empty for all. Calls for others get 404. */
  namespaces: readonly string[];
  /** Verified calls per release and minute; more get 429. */
  requestsPerMinute: number;
  /** The releases' watch re-lists when nothing arrived for this long (default 5 min). */
  watchdogMs?: number;
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

/** Verified calls' limits per release, dropped once idle (those of releases deleted meanwhile too). */
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
  const releases = watchTriggerReleases({
    client: o.kube,
    namespaces: o.namespaces,
    logger: log,
    ...(o.watchdogMs ? { watchdogMs: o.watchdogMs } : {}),
  });
  const tokens = new Tokens(o.kube, now);
  const seen = new Map<string, SeenSignatures>();

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
    // Until the first list is in, an unknown name may be a release not loaded yet.
    if (!releases.hasSynced()) {
      return reply(503, 'Starting', 'the receiver is still loading the releases: try again in 1 s', {
        'retry-after': '1',
      });
    }
    const release = releases.get(namespace, name);
    if (!release?.tokenSecretRef) return unknownRelease(namespace, name);
    const token = await tokens.of(namespace, release.tokenSecretRef);
    if ('missing' in token) {
      log.warn({ namespace, name, remote, why: token.missing }, 'trigger refused: no token to check it with');
      return reply(401, 'NoToken', 'signature does not match');
    }
    if (!verify(token.token, admitted.timestamp, body, admitted.signature)) {
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
      // Deleted since the watch last said.
      if (isNotFound(e)) return unknownRelease(namespace, name);
      throw e;
    }
    await o.events
      .emit(
        { apiVersion: GROUP_VERSION, kind: SER_KIND, metadata: release.metadata },
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
  releases.start();
  const port = (server.address() as AddressInfo).port;
  log.info({ port, requestsPerMinute: o.requestsPerMinute }, 'trigger receiver listening');
  return {
    port,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await releases.stop();
    },
  };
}
