// Strangers flooding the trigger receiver cannot lock a pipeline out: the receiver runs against the
// real API server with a virtual clock, so a minute of calls takes seconds. Forged calls never use a
// release's budget, and the API reads they cause are bounded per address and in all.
import { randomBytes } from 'node:crypto';
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
import {
  startTriggerReceiver,
  type TriggerReceiver,
  UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE,
} from '../../../src/trigger/receiver.ts';
import { createNamespace, installCrds } from '../../support/kube.ts';
import { applyRelease, applySecret } from '../../support/resources.ts';

const TOKEN = `tt-${randomBytes(24).toString('hex')}`;
let clock = Date.now();
let kube: KubeClient;
let receiver: TriggerReceiver;
let ns: string;
/** API reads the receiver made, counted on the real client it uses. */
let reads = 0;

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
        reads++;
        return kube.get(path);
      },
      mergePatch: (path, body) => kube.mergePatch(path, body),
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
});

afterAll(async () => {
  await receiver?.close();
});

/** A call signed with `token` at the virtual clock's time. */
async function call(name: string, token: string): Promise<number> {
  const timestamp = String(Math.floor(clock / 1000));
  const body = Buffer.from(JSON.stringify({ id: randomBytes(8).toString('hex') }));
  const res = await fetch(`http://127.0.0.1:${receiver.port}/hooks/${ns}/${name}`, {
    method: 'POST',
    headers: { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: sign(token, timestamp, body) },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

const forger = () => `tt-${randomBytes(24).toString('hex')}`;

describe('a flood of forged calls', () => {
  it('100 forged calls a minute against the release, a valid one every 10 s: no valid call refused', async () => {
    const valid: number[] = [];
    const forged: number[] = [];
    const readsBefore = reads;
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
    // One look at the release and its Secret per 10 s, whoever calls: at most two reads each time.
    expect(reads - readsBefore).toBeLessThanOrEqual(2 * 8);
  });

  it('calls for names it does not know are bounded per address; a valid call still gets through', async () => {
    clock += 120_000;
    const before = reads;
    const statuses: number[] = [];
    for (let i = 0; i < UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE + 20; i++) {
      statuses.push(await call(`no-such-${i}`, forger()));
    }
    expect(statuses.slice(0, UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE).every((s) => s === 429)).toBe(true);
    // Each unknown name cost one read (the release); the refused ones cost none.
    expect(reads - before).toBe(UNVERIFIED_LOOKUPS_PER_ADDRESS_PER_MINUTE);
    // The release it knows is looked up again regardless, once its last look is older than 10 s.
    expect(await call('docs', TOKEN)).toBe(202);
  });
});
