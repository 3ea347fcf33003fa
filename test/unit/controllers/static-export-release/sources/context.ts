// What a source's tests lend it: a Kubernetes API that holds no object (every read a 404, each
// recorded; what is created is kept), a registry of share groups, and a reconcile whose writes and
// failures are recorded; then the steps the reconciler takes on a look (decide, claim, act).

import type { Decision } from '../../../../../src/controllers/decision-shape.ts';
import { afterFailure, type Failure } from '../../../../../src/controllers/failures.ts';
import type { Loaded, Reservation } from '../../../../../src/controllers/reconciler-base.ts';
import { StartBudgets } from '../../../../../src/controllers/static-export-release/budget/start-budget.ts';
import {
  releaseEffects,
  runAction,
} from '../../../../../src/controllers/static-export-release/release-actions.ts';
import type { ReleaseRun } from '../../../../../src/controllers/static-export-release/release-effect.ts';
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
  /** A reconcile whose decided `status` was written; `sent` is its reservation's. */
  run(status: Status, sent?: () => void): ReleaseRun;
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
  // The effect's run as the skeleton lends it: what is committed becomes the status meant.
  const run = (status: Status, sent: () => void = () => {}): ReleaseRun => {
    let meant = status;
    return {
      get status() {
        return meant;
      },
      signal: undefined,
      sent,
      commit: async (step) => {
        meant = step.status;
        committed.push({ status: step.status, events: [...step.events] });
      },
      fail: async (s, failure) => {
        meant = s;
        failed.push({ status: s, failure });
        return afterFailure(failure);
      },
    };
  };
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
  const reservation = reserved.get(d);
  try {
    if (d.action.kind === 'none') return {};
    const effects = releaseEffects(l.ctx.options, DEFAULT_TUNABLES);
    return await runAction(
      effects,
      look,
      d.action,
      l.run(d.status, () => reservation?.sent()),
    );
  } finally {
    reservation?.release();
  }
}
