// The shared reconcile: what an action's failure leaves in status and events.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Failure } from '../../../src/controllers/failures.ts';
import { Reconciler, type Run } from '../../../src/controllers/skeleton.ts';
import type { KubeClient } from '../../../src/runtime/kube-client.ts';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: object;
  status?: { reason?: string };
}
type Status = NonNullable<Obj['status']>;
type D = { action: { kind: string }; status: Status; events: [] };

/** Acts without the admin API and records `f` as the action's failure. */
class FailingAction extends Reconciler<Obj, Status, object, D> {
  private readonly f: Failure;

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
  protected decide(): D {
    return { action: { kind: 'act' }, status: {}, events: [] };
  }
  protected withFailure(s: Status, f: Failure): Status {
    return { ...s, reason: f.reason };
  }
  protected act(_o: object, _d: D, run: Run<Obj, Status>) {
    return this.fail(run, run.record.status, this.f, new Error(this.f.message));
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
