// The shared reconcile: what an action's failure leaves in status and events, the conditions of every
// status it writes, the rule it logs, and the reservation its claim step took (spent once sent,
// else given back on every path).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Decision } from '../../../src/controllers/decision-shape.ts';
import type { Failure } from '../../../src/controllers/failures.ts';
import { type ActionTable, Reconciler } from '../../../src/controllers/reconciler-base.ts';
import { KubeApiError, type KubeClient } from '../../../src/runtime/kube-client.ts';

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

type Said = { step?: string; said?: string };
type Done = { kind: 'none' } | { kind: 'done' };
interface Thing extends Omit<Obj, 'status'> {
  status?: Said;
}

/** Decides `d` and, for `done`, commits the outcome `{ step: 'done' }`; its conditions say what was derived. */
class Committing extends Reconciler<Thing, Said, object, Done> {
  private readonly d: Decision<Done, Said>;
  protected readonly actions: ActionTable<object, Done, Thing, Said> = {
    done: {
      run: async (_o, _a, run) => {
        await run.commit({ status: { step: 'done' }, events: [] });
        return {};
      },
    },
  };

  constructor(kube: KubeClient, debug: object[], d: Decision<Done, Said>) {
    const logger = { debug: (o: object) => void debug.push(o), warn() {}, info() {}, error() {} } as never;
    super(
      { kube, clients: {} as never, events: { emit: async () => {} }, logger },
      { apiVersion: 'example.dev/v1', plural: 'things', specSchema: z.object({}), logKey: 'thing' },
    );
    this.d = d;
  }
  protected callsApi() {
    return false;
  }
  protected async observe() {
    return {};
  }
  protected decide() {
    return this.d;
  }
  protected conditions(_obj: Thing, s: Said, f: Failure | undefined): Said {
    return { ...s, said: f ? f.reason : 'healthy' };
  }
}

describe('every status the skeleton writes', () => {
  async function reconcile(d: Decision<Done, Said>) {
    const written: Said[] = [];
    const debug: object[] = [];
    const kube = {
      get: async () => ({
        apiVersion: 'example.dev/v1',
        kind: 'Thing',
        metadata: { name: 'n', namespace: 'ns', resourceVersion: '1' },
        spec: {},
      }),
      apply: async (_path: string, body: { status: Said }) => {
        written.push(body.status);
        return { metadata: { resourceVersion: String(written.length + 1) } };
      },
    } as unknown as KubeClient;
    await new Committing(kube, debug, d).reconcile('ns', 'n');
    return { written, debug };
  }

  it("carries the conditions derived from it and the failure: the decision's and the action's outcome", async () => {
    const { written } = await reconcile({
      action: { kind: 'done' },
      status: { step: 'decided' },
      events: [],
    });
    expect(written).toEqual([
      { step: 'decided', said: 'healthy' },
      { step: 'done', said: 'healthy' },
    ]);
    const f: Failure = { reason: 'ApiUnavailable', message: 'down', stalled: false };
    const failed = await reconcile({ action: { kind: 'none' }, status: {}, events: [], failure: f });
    expect(failed.written).toEqual([{ said: 'ApiUnavailable' }]);
  });

  it('but one whose outcome is pending: written as decided, the outcome brings them', async () => {
    const { written } = await reconcile({
      action: { kind: 'done' },
      status: { step: 'marked' },
      events: [],
      pending: true,
    });
    expect(written).toEqual([{ step: 'marked' }, { step: 'done', said: 'healthy' }]);
  });

  it('is decided by a rule the debug log names', async () => {
    const { debug } = await reconcile({ action: { kind: 'none' }, status: {}, events: [], rule: 'settle' });
    expect(debug).toContainEqual(expect.objectContaining({ thing: 'ns/n', rule: 'settle' }));
  });
});

type Claim = { kind: 'none' } | { kind: 'call' };

/** Reserves something for each decision; its action does `act` (which may say the call was sent). */
class Reserving extends Reconciler<Thing, Said, object, Claim> {
  readonly log: string[] = [];
  private readonly act: (run: { sent(): void }) => Promise<void>;
  private readonly d: Decision<Claim, Said>;
  protected readonly actions: ActionTable<object, Claim, Thing, Said> = {
    call: {
      run: async (_o, _a, run) => {
        await this.act(run);
        return {};
      },
    },
  };

  constructor(kube: KubeClient, d: Decision<Claim, Said>, act: (run: { sent(): void }) => Promise<void>) {
    const logger = { debug() {}, warn() {}, info() {}, error() {} } as never;
    super(
      { kube, clients: {} as never, events: { emit: async () => {} }, logger },
      { apiVersion: 'example.dev/v1', plural: 'things', specSchema: z.object({}), logKey: 'thing' },
    );
    this.d = d;
    this.act = act;
  }
  protected callsApi() {
    return false;
  }
  protected async observe() {
    return {};
  }
  protected decide() {
    return this.d;
  }
  protected override claim() {
    let held = true;
    return {
      sent: () => {
        if (held) this.log.push('sent');
        held = false;
      },
      release: () => {
        if (held) this.log.push('released');
        held = false;
      },
    };
  }
  protected conditions(_obj: Thing, s: Said): Said {
    return s;
  }
}

describe('a reservation the claim step took', () => {
  const thing = {
    apiVersion: 'example.dev/v1',
    kind: 'Thing',
    metadata: { name: 'n', namespace: 'ns', resourceVersion: '1' },
    spec: {},
  };
  const kube = (apply: () => Promise<unknown>) =>
    ({ get: async () => thing, apply }) as unknown as KubeClient;
  const written = async () => ({ metadata: { resourceVersion: '2' } });
  const call: Decision<Claim, Said> = { action: { kind: 'call' }, status: { step: 'marked' }, events: [] };

  it.each<[string, () => Promise<unknown>, (run: { sent(): void }) => Promise<void>, string[]]>([
    [
      'the action sent its request, then failed',
      written,
      async (run) => {
        run.sent();
        throw new Error('answer lost');
      },
      ['sent'],
    ],
    ['the action sent its request', written, async (run) => run.sent(), ['sent']],
    [
      'the action failed before sending',
      written,
      async () => {
        throw new Error('refused before the request');
      },
      ['released'],
    ],
    [
      'the status write conflicted',
      async () => {
        throw new KubeApiError(409, 'Conflict', 'changed');
      },
      async (run) => run.sent(),
      ['released'],
    ],
    [
      'the status write failed',
      async () => {
        throw new KubeApiError(500, 'InternalError', 'down');
      },
      async (run) => run.sent(),
      ['released'],
    ],
  ])('is spent or given back once, by the skeleton: %s', async (_, apply, act, log) => {
    const r = new Reserving(kube(apply), call, act);
    await r.reconcile('ns', 'n').catch(() => {});
    expect(r.log).toEqual(log);
  });

  it('is given back when the decision acts on nothing', async () => {
    const r = new Reserving(
      kube(written),
      { action: { kind: 'none' }, status: {}, events: [] },
      async () => {},
    );
    await r.reconcile('ns', 'n');
    expect(r.log).toEqual(['released']);
  });
});
