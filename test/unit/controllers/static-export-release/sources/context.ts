// What a source's tests lend it: a Kubernetes API that holds no object (every read a 404, each
// recorded; what is created is kept), a registry of share groups, and a reconcile whose writes and
// failures are recorded; then the steps the reconciler takes on a look (decide, claim, act).
import type { Decision } from '../../../../../src/controllers/decision-shape.ts';
import { afterFailure, type Failure } from '../../../../../src/controllers/failures.ts';
import type { Loaded, Reservation } from '../../../../../src/controllers/reconciler-base.ts';
import { StartBudgets } from '../../../../../src/controllers/static-export-release/budget/start-budget.ts';
import {
  type ReleaseRun,
  releaseActions,
} from '../../../../../src/controllers/static-export-release/release-actions.ts';
import {
  type Action,
  DEFAULT_TUNABLES,
  type Folded,
  type Status,
} from '../../../../../src/controllers/static-export-release/release-model.ts';
import { claim, decideOn } from '../../../../../src/controllers/static-export-release/release-reconciler.ts';
import { SharedExports } from '../../../../../src/controllers/static-export-release/share/shared-exports.ts';
import type {
  Look,
  SourceContext,
} from '../../../../../src/controllers/static-export-release/sources/source.ts';
import type { StaticExportRelease } from '../../../../../src/crd/index.ts';
import type { ReconcileResult } from '../../../../../src/runtime/controller.ts';
import { KubeApiError, type KubeClient } from '../../../../../src/runtime/kube-client.ts';
import { NOW } from '../../../../support/fixtures/release-fixtures.ts';

export interface Lent {
  ctx: SourceContext;
  shared: SharedExports;
  /** Paths read from the Kubernetes API. */
  reads: string[];
  /** Objects created through it. */
  created: { data?: Record<string, string> }[];
  committed: Folded[];
  failed: { status: Status; failure: Failure }[];
  /** A reconcile of `release` whose decided status was written. */
  run(release: StaticExportRelease, status: Status): ReleaseRun;
}

export function lent(): Lent {
  const reads: string[] = [];
  const absent = async (path: string) => {
    reads.push(path);
    throw new KubeApiError(404, 'NotFound', `${path} not found`);
  };
  const created: Lent['created'] = [];
  const kube = {
    get: absent,
    request: (_method: string, path: string) => absent(path),
    create: async (_path: string, body: Lent['created'][number]) => {
      created.push(body);
      return body;
    },
  } as unknown as KubeClient;
  const shared = new SharedExports();
  const committed: Folded[] = [];
  const failed: Lent['failed'] = [];
  const ctx: SourceContext = {
    options: {
      kube,
      shared,
      budgets: new StartBudgets(),
      clients: {} as never,
      events: {} as never,
      logger: {} as never,
      cache: {} as never,
      // The operator's cache holds no labelled workload: none is listed.
      labelledWorkloads: () => false,
    },
  };
  const run = (release: StaticExportRelease, status: Status): ReleaseRun =>
    ({
      obj: release,
      now: NOW,
      record: { status },
      signal: undefined,
      events: [],
      unsent: [],
      commit: async (step: Folded) => {
        committed.push(step);
      },
      fail: async (s: Status, failure: Failure): Promise<ReconcileResult> => {
        failed.push({ status: s, failure });
        return afterFailure(failure);
      },
    }) as unknown as ReleaseRun;
  return { ctx, shared, reads, created, committed, failed, run };
}

/** The skeleton's load of `release` at NOW. */
export const loaded = (
  release: StaticExportRelease,
  extra: Omit<Loaded<StaticExportRelease>, 'now' | 'obj'> = {},
): Loaded<StaticExportRelease> => ({ now: NOW, obj: release, ...extra });

/** What each decision's claim step reserved, given back after its action as the skeleton does. */
const reserved = new WeakMap<Decision<Action, Status>, Reservation>();

/** The reconciler's decision on a look, and its claim step right after. */
export function decideAndClaim(look: Look): Decision<Action, Status> {
  const d = decideOn(look, DEFAULT_TUNABLES);
  const reservation = claim(look, d);
  if (reservation) reserved.set(d, reservation);
  return d;
}

/** Runs the decided action's entry of the action table on `look`; what was not sent is given back. */
export async function act(l: Lent, look: Look, d: Decision<Action, Status>): Promise<ReconcileResult> {
  const entries = releaseActions(l.ctx.options, DEFAULT_TUNABLES) as unknown as Record<
    string,
    { run(look: Look, action: Action, run: ReleaseRun): Promise<ReconcileResult> }
  >;
  const entry = entries[d.action.kind];
  const reservation = reserved.get(d);
  try {
    if (!entry) return {};
    const run = { ...l.run(look.observed.release, d.status), sent: () => reservation?.sent() };
    return await entry.run(look, d.action, run);
  } finally {
    reservation?.release();
  }
}
