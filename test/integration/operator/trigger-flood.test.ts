// Strangers flooding the trigger receiver cannot lock a pipeline out: the receiver runs against the
// real API server with a virtual clock, so a minute of calls takes seconds. Forged calls never use a
// release's budget; names are resolved from the receiver's watch, so calls for names that do not
// exist cost nothing, from however many addresses, and a release created meanwhile takes calls at once.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { EventRecorder, refTo } from '../../../src/runtime/events.ts';
import type { KubeObject } from '../../../src/runtime/informer.ts';
import { KubeClient } from '../../../src/runtime/kube-client.ts';
import {
  DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
  SIGNATURE_HEADER,
  sign,
  TIMESTAMP_HEADER,
} from '../../../src/trigger/contract.ts';
import { startTriggerReceiver, type TriggerReceiver } from '../../../src/trigger/receiver.ts';
import { createNamespace, eventually, installCrds } from '../../support/cluster/kube.ts';
import { applyRelease, applySecret } from '../../support/cluster/resources.ts';

const TOKEN = `tt-${randomBytes(24).toString('hex')}`;
let clock = Date.now();
let kube: KubeClient;
let receiver: TriggerReceiver;
let ns: string;
/** API reads (paths) the receiver made, counted on the real client it uses. */
const reads: string[] = [];
const readsOf = (kind: 'secrets' | 'staticexportreleases', from = 0) =>
  reads.slice(from).filter((p) => p.includes(`/${kind}/`)).length;

beforeAll(async () => {
  await installCrds();
  ns = await createNamespace('trigger-flood');
  await applySecret(ns, 'token', { token: TOKEN });
  await applyRelease(ns, 'docs', { trigger: { tokenSecretRef: { name: 'token' } } });
  kube = await KubeClient.create(inject('kubeconfig'));
  const recorder = new EventRecorder({ client: kube, reportingInstance: 'trigger-flood-test' });
  receiver = await startTriggerReceiver({
    host: '127.0.0.1',
    port: 0,
    kube: {
      get: (path) => {
        reads.push(path);
        return kube.get(path);
      },
      mergePatch: (path, body) => kube.mergePatch(path, body),
      list: (path, query, pageSize, signal) => kube.list(path, query, pageSize, signal),
      watch: (path, query, signal) => kube.watch(path, query, signal),
    },
    logger: createLogger({ level: 'silent' }),
    events: {
      emit: (obj, type, reason, note) =>
        recorder.record({ regarding: refTo(obj as KubeObject), type, reason, action: reason, note }),
    },
    namespaces: [ns],
    requestsPerMinute: DEFAULT_TRIGGER_REQUESTS_PER_MINUTE,
    now: () => clock,
  });
  // Its first list of the releases is in once an unknown name gets 404 (503 before).
  await eventually('the receiver synced', async () => (await call('no-such', forger())) === 404);
});

afterAll(async () => {
  await receiver?.close();
});

/**
 * A call signed with `token` at the virtual clock's time, on a connection of its own from
 * `from` (any 127.x.y.z: all of 127.0.0.0/8 is loopback), as callers at many addresses make it.
 */
function call(name: string, token: string, from = '127.0.0.1'): Promise<number> {
  const timestamp = String(Math.floor(clock / 1000));
  const body = Buffer.from(JSON.stringify({ id: randomBytes(8).toString('hex') }));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: receiver.port,
        localAddress: from,
        agent: false,
        method: 'POST',
        path: `/hooks/${ns}/${name}`,
        headers: {
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: sign(token, timestamp, body),
          'content-length': body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const forger = () => `tt-${randomBytes(24).toString('hex')}`;

describe('a flood of forged calls', () => {
  it('100 forged calls a minute against the release, a valid one every 10 s: no valid call refused', async () => {
    const valid: number[] = [];
    const forged: number[] = [];
    const readsBefore = reads.length;
    // Seven valid calls 10 s apart (the sliding minute holds six), 100 forged calls spread between them.
    const start = clock;
    for (let step = 0; step <= 6; step++) {
      clock = start + step * 10_000;
      valid.push(await call('docs', TOKEN));
      const between = step === 6 ? 0 : step < 4 ? 17 : 16;
      for (let i = 1; i <= between; i++) {
        clock = start + step * 10_000 + (i * 10_000) / (between + 1);
        forged.push(await call('docs', forger()));
      }
    }
    expect(forged.length).toBe(100);
    expect(forged.every((s) => s === 401)).toBe(true);
    expect(valid).toEqual([202, 202, 202, 202, 202, 202, 202]);
    // The release comes from the watch; its token Secret is read once per 10 s, whoever calls.
    expect(readsOf('staticexportreleases', readsBefore)).toBe(0);
    expect(readsOf('secrets', readsBefore)).toBeLessThanOrEqual(8);
  });

  it('calls for random names from many addresses: a release created meanwhile takes its first signed call', async () => {
    clock += 120_000;
    const readsBefore = reads.length;
    // Well past what used to lock everyone out (30 such calls a minute from one address, 300 from
    // all), and bounded: at most ADDRESSES * MAX_PER_ADDRESS calls, ending once the pipeline is done.
    const ADDRESSES = 16;
    const MAX_PER_ADDRESS = 150;
    const addresses = Array.from({ length: ADDRESSES }, (_, i) => `127.${10 + i}.${i * 7}.${1 + i}`);
    const strangers: number[] = [];
    let pipelineDone = false;
    const flood = Promise.all(
      addresses.map(async (from) => {
        for (let i = 0; i < MAX_PER_ADDRESS && !pipelineDone; i++) {
          strangers.push(await call(`stranger-${randomBytes(6).toString('hex')}`, forger(), from));
        }
      }),
    );
    await eventually('400 calls from strangers', async () => strangers.length >= 400);
    await applyRelease(ns, 'fresh', { trigger: { tokenSecretRef: { name: 'token' } } });
    const createdAfter = strangers.length;
    // The strangers' forged calls for its name say when the receiver knows it: 401, no longer 404.
    // (The pipeline behind the same ingress calls from the same address as a stranger.)
    const shared = addresses[0];
    const probe = await eventually('the receiver knows fresh', async () => {
      const status = await call('fresh', forger(), shared);
      return status !== 404 && status;
    });
    expect(probe).toBe(401);
    const first = await call('fresh', TOKEN, shared);
    const during = strangers.length;
    pipelineDone = true;
    await flood;
    expect(first).toBe(202);
    expect(during).toBeLessThan(ADDRESSES * MAX_PER_ADDRESS);
    expect(createdAfter).toBeGreaterThanOrEqual(400);
    expect(strangers.every((s) => s === 404)).toBe(true);
    // Unknown names were answered from memory; the one token read was the new release's.
    expect(readsOf('staticexportreleases', readsBefore)).toBe(0);
    expect(readsOf('secrets', readsBefore)).toBe(1);
    console.log(
      `trigger flood: ${strangers.length} forged calls for random names from ${ADDRESSES} addresses, all 404; ` +
        `fresh created after ${createdAfter}, its first signed call 202 after ${during}`,
    );
  });
});
