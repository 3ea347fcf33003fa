// The receiver's decisions on a real HTTP server, its release watch fed by a list-watch fake the
// test drives event by event: names resolved from memory, token reads bounded per release, and
// every refusal before any write. The real API server path: test/integration/operator/trigger*.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { GROUP_VERSION, SER_KIND } from '../../../src/crd/index.ts';
import { createLogger } from '../../../src/log.ts';
import { KubeApiError } from '../../../src/runtime/kube-client.ts';
import { SIGNATURE_HEADER, sign, TIMESTAMP_HEADER } from '../../../src/trigger/contract.ts';
import { startTriggerReceiver, type TriggerReceiver } from '../../../src/trigger/receiver.ts';
import { TOKEN_TTL_MS } from '../../../src/trigger/tokens.ts';
import { FakeKube, until } from '../runtime/fake-kube.ts';

const NS = 'docs';
const TOKEN = `tt-${randomBytes(24).toString('hex')}`;
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/token`;

const release = (name: string, rv: number, trigger = true) => ({
  apiVersion: GROUP_VERSION,
  kind: SER_KIND,
  metadata: { namespace: NS, name, uid: `uid-${name}`, resourceVersion: String(rv) },
  spec: {
    domain: `${name}.example.com`,
    ...(trigger ? { trigger: { tokenSecretRef: { name: 'token', key: 'token' } } } : {}),
  },
});

const secret = (token: string) => ({ data: { token: Buffer.from(`${token}\n`).toString('base64') } });

/** The API server as the receiver sees it: releases listed and watched, Secrets read, patches. */
class Api extends FakeKube {
  secrets = new Map<string, unknown>([[SECRET_PATH, secret(TOKEN)]]);
  /** The next reads of Secrets fail with this. */
  readError: unknown;
  reads: string[] = [];
  patches: string[] = [];
  patchError: unknown;
  async get<T>(path: string): Promise<T> {
    this.reads.push(path);
    if (this.readError) throw this.readError;
    // Answered a little later, as a real read is: calls arriving meanwhile share it.
    await new Promise((r) => setTimeout(r, 20));
    const s = this.secrets.get(path);
    if (!s) throw new KubeApiError(404, 'NotFound', `${path} not found`);
    return structuredClone(s) as T;
  }
  async mergePatch<T>(path: string): Promise<T> {
    if (this.patchError) throw this.patchError;
    this.patches.push(path);
    return {} as T;
  }
}

let clock = Date.parse('2026-11-27T09:00:00Z');
let receiver: TriggerReceiver | undefined;
let logLines: string[] = [];

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function start(api: Api, o: { namespaces?: string[] } = {}): Promise<TriggerReceiver> {
  logLines = [];
  receiver = await startTriggerReceiver({
    host: '127.0.0.1',
    port: 0,
    kube: api,
    logger: createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk, _enc, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    }),
    events: { emit: async () => {} },
    namespaces: o.namespaces ?? [NS],
    requestsPerMinute: 2,
    now: () => clock,
  });
  return receiver;
}

/** A synced receiver with `api.objects` listed. */
async function synced(api: Api): Promise<TriggerReceiver> {
  const r = await start(api);
  await until('the first list', () => api.listCalls.length === 1);
  await until('the watch', () => api.streams.length === 1);
  return r;
}

interface Answer {
  status: number;
  message: string;
  retryAfter: string | null;
}

async function call(name: string, token = TOKEN, ns = NS): Promise<Answer> {
  const timestamp = String(Math.floor(clock / 1000));
  const body = Buffer.from(JSON.stringify({ id: randomBytes(8).toString('hex') }));
  const res = await fetch(`http://127.0.0.1:${receiver?.port}/hooks/${ns}/${name}`, {
    method: 'POST',
    headers: { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: sign(token, timestamp, body) },
    body,
  });
  const { message } = (await res.json()) as { message: string };
  return { status: res.status, message, retryAfter: res.headers.get('retry-after') };
}

/** Calls (each signed anew) until the answer is not `status`: what an event delivered changed. */
async function firstBut(status: number, name: string, between = () => {}): Promise<Answer> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const a = await call(name);
    if (a.status !== status || Date.now() > deadline) return a;
    between();
    await new Promise((r) => setTimeout(r, 5));
  }
}

const forged = () => `tt-${randomBytes(24).toString('hex')}`;

describe('names are resolved from the watch', () => {
  it('answers 503 with Retry-After until the first list is in, reading nothing', async () => {
    const api = new Api();
    api.objects = [release('site', 5)];
    api.hangList = true;
    await start(api);
    expect(await call('site')).toEqual({
      status: 503,
      message: 'the receiver is still loading the releases: try again in 1 s',
      retryAfter: '1',
    });
    expect(api.reads).toEqual([]);
    expect(api.patches).toEqual([]);
  });

  it('unknown names, a release without spec.trigger: 404 from memory, no read, no budget taken', async () => {
    const api = new Api();
    api.objects = [release('site', 5), release('plain', 6, false)];
    await synced(api);
    const unknown = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(`no-such-${i}`, forged()).then((a) => a.status)),
    );
    expect(new Set(unknown)).toEqual(new Set([404]));
    expect(await call('plain')).toMatchObject({
      status: 404,
      message: `no StaticExportRelease ${NS}/plain accepts triggers here`,
    });
    expect(api.reads).toEqual([]);
    expect((await call('site')).status).toBe(202);
    expect(api.patches).toEqual([`/apis/${GROUP_VERSION}/namespaces/${NS}/staticexportreleases/site`]);
  });

  it('knows a release as soon as the watch delivers it, and forgets it when deleted', async () => {
    const api = new Api();
    await synced(api);
    expect((await call('fresh')).status).toBe(404);
    api.lastStream().send('ADDED', release('fresh', 7));
    // No window in which the name stays unknown: the first answer other than 404 is the 202.
    expect(await firstBut(404, 'fresh')).toMatchObject({ status: 202 });
    api.lastStream().send('DELETED', release('fresh', 8));
    expect(await firstBut(202, 'fresh', () => (clock += 60_000))).toMatchObject({ status: 404 });
  });

  it('a namespace the operator does not watch: 404 without a read', async () => {
    const api = new Api();
    api.objects = [release('site', 5)];
    await synced(api);
    expect((await call('site', TOKEN, 'elsewhere')).status).toBe(404);
    expect(api.reads).toEqual([]);
  });
});

describe('tokens', () => {
  it('forged calls for a release share one Secret read per TOKEN_TTL_MS and take none of its budget', async () => {
    const api = new Api();
    api.objects = [release('site', 5)];
    await synced(api);
    const flood = await Promise.all(Array.from({ length: 60 }, () => call('site', forged())));
    expect(new Set(flood.map((a) => a.status))).toEqual(new Set([401]));
    expect(flood[0]?.message).toBe('signature does not match');
    expect(api.reads).toEqual([SECRET_PATH]);
    // The release takes two verified calls a minute: both are the pipeline's.
    expect((await call('site')).status).toBe(202);
    expect((await call('site')).status).toBe(202);
    expect(await call('site')).toMatchObject({ status: 429, retryAfter: '60' });
    expect(api.reads).toEqual([SECRET_PATH]);
    clock += TOKEN_TTL_MS;
    await Promise.all(Array.from({ length: 20 }, () => call('site', forged())));
    expect(api.reads).toEqual([SECRET_PATH, SECRET_PATH]);
  });

  it('a rotated token is taken once the read is TOKEN_TTL_MS old', async () => {
    const api = new Api();
    api.objects = [release('site', 5)];
    await synced(api);
    expect((await call('site')).status).toBe(202);
    const rotated = forged();
    api.secrets.set(SECRET_PATH, secret(rotated));
    expect((await call('site', rotated)).status).toBe(401);
    clock += TOKEN_TTL_MS;
    expect((await call('site', rotated)).status).toBe(202);
    expect((await call('site')).status).toBe(401);
  });

  it.each([
    ['does not exist', undefined],
    ['has no key token', { data: { other: 'eA==' } }],
    ['key token is empty', { data: { token: Buffer.from(' \n').toString('base64') } }],
  ])('a token Secret that %s: 401 to the caller, the log says why', async (why, stored) => {
    const api = new Api();
    api.objects = [release('site', 5)];
    if (stored) api.secrets.set(SECRET_PATH, stored);
    else api.secrets.clear();
    await synced(api);
    expect(await call('site')).toMatchObject({ status: 401, message: 'signature does not match' });
    expect(api.patches).toEqual([]);
    const line = logLines.find((l) => l.includes('no token to check it with'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({ why: `Secret ${NS}/token ${why}`, name: 'site' });
  });

  it('a Secret read that fails: 503, and the next call reads again', async () => {
    const api = new Api();
    api.objects = [release('site', 5)];
    await synced(api);
    api.readError = new KubeApiError(500, 'InternalError', 'etcdserver: request timed out');
    expect(await call('site')).toMatchObject({
      status: 503,
      message: 'the release could not be read or updated: try again',
    });
    api.readError = undefined;
    expect((await call('site')).status).toBe(202);
    expect(api.reads).toEqual([SECRET_PATH, SECRET_PATH]);
  });
});

describe('the annotation write', () => {
  it('a release deleted before the watch says so: 404; a failed write: 503', async () => {
    const api = new Api();
    api.objects = [release('site', 5)];
    await synced(api);
    api.patchError = new KubeApiError(404, 'NotFound', 'staticexportreleases "site" not found');
    expect((await call('site')).status).toBe(404);
    api.patchError = new KubeApiError(500, 'InternalError', 'boom');
    expect((await call('site')).status).toBe(503);
  });
});
