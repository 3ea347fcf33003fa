// The shared reconcile: what an action's failure leaves in status and events.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Decision } from '../../../src/controllers/decision.ts';
import type { Failure } from '../../../src/controllers/failures.ts';
import { type ActionTable, Reconciler } from '../../../src/controllers/skeleton.ts';
import type { KubeClient } from '../../../src/runtime/kube-client.ts';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: object;
  status?: { reason?: string };
}
type Status = NonNullable<Obj['status']>;
type A = { kind: 'none' } | { kind: 'act' };

/** Acts without the admin API and records `f` as the action's failure. */
class FailingAction extends Reconciler<Obj, Status, object, A> {
  private readonly f: Failure;
  protected readonly actions: ActionTable<object, A, Obj, Status> = {
    act: { run: (_o, _a, run) => run.fail(run.record.status, this.f, new Error(this.f.message)) },
  };

  constructor(kube: KubeClient, events: string[], f: Failure) {
    const logger = { debug() {}, warn() {}, info() {}, error() {} } as never;
    const sink = { emit: async (_o: unknown, _t: unknown, reason: string) => void events.push(reason) };
    super(
      { kube, clients: {} as never, events: sink, logger },
      {
        apiVersion: 'example.dev/v1',
        plural: 'things',
        specSchema: z.object({}),
        logKey: 'thing',
      },
    );
    this.f = f;
  }
  protected callsApi() {
    return false;
  }
  protected async observe() {
    return {};
  }
  protected decide(): Decision<A, Status> {
    return { action: { kind: 'act' }, status: {}, events: [] };
  }
  protected conditions(_obj: Obj, s: Status, f: Failure | undefined): Status {
    return f ? { ...s, reason: f.reason } : s;
  }
}

describe('a failure an action records', () => {
  it.each<[string, Failure, object]>([
    [
      'transient: backoff',
      { reason: 'ImageInvalid', message: 'altered', stalled: false },
      { backoff: expect.any(Error) },
    ],
    [
      'with a delay',
      { reason: 'RateLimited', message: 'slow down', stalled: false, retryAfterMs: 5_000 },
      { requeueAfterMs: 5_000 },
    ],
  ])('is written once, with its own reason (%s)', async (_, f, result) => {
    const written: (string | undefined)[] = [];
    const events: string[] = [];
    const kube = {
      get: async () => ({
        apiVersion: 'example.dev/v1',
        kind: 'Thing',
        metadata: { name: 'n', namespace: 'ns', resourceVersion: '1' },
        spec: {},
      }),
      apply: async (_path: string, body: { status: Status }) => {
        written.push(body.status.reason);
        return { metadata: { resourceVersion: String(written.length + 1) } };
      },
    } as unknown as KubeClient;
    const r = new FailingAction(kube, events, f);
    expect(await r.reconcile('ns', 'n')).toEqual(result);
    expect(written).toEqual([f.reason]);
    expect(events).toEqual([f.reason]);
  });
});
