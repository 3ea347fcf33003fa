// What the start-budget benchmarks (budget.ts, budget-faults.ts) share: their virtual day's clock
// and work queue, the releases as the API server holds them at its start, and one release's
// reconcile on the platform's current export API as the operator runs it: observe (its share and
// budget visits, the recorded job polled once for its share group, as export/platform-export.ts),
// decide and claim (release-reconciler.ts `decideOn` and `claim`); the bench then acts with the
// operator's own effects on the run the reconcile lends them, the publish through the link step.
// No target and no download: a version is derived from the job id. Each bench keeps its own
// bookkeeping of outcomes.
import { type AdminApiClient, oneJobAtATimeOf } from '../src/api/index.ts';
import { BudgetVisit } from '../src/controllers/static-export-release/budget/budget-visit.ts';
import { budgetGroup, memberOf } from '../src/controllers/static-export-release/budget/recorded-starts.ts';
import type { StartBudgets } from '../src/controllers/static-export-release/budget/start-budget.ts';
import { exportTarget, recordedJob } from '../src/controllers/static-export-release/export/export-site.ts';
import { exportPoll } from '../src/controllers/static-export-release/export/platform-export.ts';
import { afterPublish } from '../src/controllers/static-export-release/export/publish-content.ts';
import { askLink, foldLink } from '../src/controllers/static-export-release/link/job-link.ts';
import {
  meant,
  type Of,
  type ReleaseRun,
  settle,
} from '../src/controllers/static-export-release/release-effect.ts';
import { DEFAULT_TUNABLES, type Decision } from '../src/controllers/static-export-release/release-model.ts';
import { claim, decideOn } from '../src/controllers/static-export-release/release-reconciler.ts';
import { startDemandIntervalMs } from '../src/controllers/static-export-release/schedule.ts';
import { ShareVisit } from '../src/controllers/static-export-release/share/share-visit.ts';
import {
  memberKey,
  type SharedExports,
  shareKey,
} from '../src/controllers/static-export-release/share/shared-exports.ts';
import type {
  MemberObserved,
  PlatformLook,
} from '../src/controllers/static-export-release/sources/source.ts';
import type { ReconcileResult } from '../src/controllers/types.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../src/crd/index.ts';
import type { Simulator } from '../src/simulator/index.ts';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** When the virtual day starts. */
export const START = Date.parse('2026-01-01T00:00:00Z');
const TUN = DEFAULT_TUNABLES;

/** A release created at START with no status yet, its values in the Secret `values-<name>`. */
export function dayRelease(
  namespace: string,
  name: string,
  spec: { projectId: string; interval: string; basePath?: string },
): StaticExportRelease {
  return {
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: {
      name,
      namespace,
      uid: `${namespace}-${name}`,
      generation: 1,
      creationTimestamp: new Date(START).toISOString(),
    },
    spec: staticExportReleaseSpecSchema.parse({
      ...spec,
      credentialsSecretRef: { name: 'key' },
      target: { valuesSecret: { name: `values-${name}` } },
    }),
    status: {},
  };
}

/** A release on the day's work queue: when it is looked at next (undefined: only when woken). */
export interface Queued {
  release: StaticExportRelease;
  nextAt: number | undefined;
}

/**
 * The operators' work queue over the day's releases, on the simulator's clock: the next look due is
 * taken; a wake (the budget's or the share group's) brings a release's look to now, one during its
 * own reconcile too.
 */
export class WorkQueue<S extends Queued> {
  readonly sites: S[] = [];
  private readonly sim: Simulator;
  private reconciling: string | undefined;
  private woken = false;

  constructor(sim: Simulator) {
    this.sim = sim;
  }

  readonly wake = (member: string): void => {
    if (member === this.reconciling) this.woken = true;
    const s = this.sites.find((x) => memberKey(x.release) === member);
    if (s) s.nextAt = Math.min(s.nextAt ?? Number.POSITIVE_INFINITY, this.sim.now());
  };

  /** The release whose look is due first, if any is. */
  next(): (S & { nextAt: number }) | undefined {
    let next: S | undefined;
    for (const s of this.sites)
      if (s.nextAt !== undefined && (next?.nextAt === undefined || s.nextAt < next.nextAt)) next = s;
    return next as (S & { nextAt: number }) | undefined;
  }

  /** Moves the simulator's clock on to `at` (never back). */
  advanceTo(at: number): void {
    if (at > this.sim.now()) this.sim.advanceTime(at - this.sim.now());
  }

  /** Reconciles `s` at its time; it looks next after the delay answered, or at once if woken meanwhile. */
  async turn(s: S, reconcile: (s: S) => Promise<number | undefined>): Promise<void> {
    this.advanceTo(s.nextAt ?? this.sim.now());
    this.reconciling = memberKey(s.release);
    this.woken = false;
    const after = await reconcile(s);
    s.nextAt = this.woken ? this.sim.now() : after === undefined ? undefined : this.sim.now() + after;
    this.reconciling = undefined;
  }
}

/** What one operator reconciles with: its client (the key its Secret holds now), budgets and share groups. */
export interface Reconciling {
  client: AdminApiClient;
  budgets: StartBudgets;
  shared: SharedExports;
}

/**
 * What a bench keeps of a reconcile's outcomes, as the skeleton would: the commits (the bench stores
 * their status in the release it holds), a failure's record; `sent` besides the reservation's.
 */
export interface Lender {
  commit: ReleaseRun['commit'];
  fail: ReleaseRun['fail'];
  sent?(): void;
}

/**
 * A release's look and the decision on it; the run lent to the operator's effects (its `sent`
 * spends the decision's reservation), and the publish of the decision's job on that run.
 */
export interface Claimed {
  look: PlatformLook;
  decision: Decision;
  run: ReleaseRun;
  publish(action: Of<'publish'>): Promise<Published>;
}

/**
 * observe -> decide and claim on the release `held` holds, with the visits platform-export.ts opens;
 * the decided status is held (what the effects act on), `act` runs, and the claim and the visit are
 * let go after.
 */
export async function reconcileRelease<T>(
  { client, budgets, shared }: Reconciling,
  held: { release: StaticExportRelease },
  now: Date,
  lender: Lender,
  act: (claimed: Claimed) => Promise<T>,
): Promise<T> {
  const { release } = held;
  const member = memberKey(release);
  const key = shareKey(client.identity, release.spec);
  const oneJob = oneJobAtATimeOf(exportTarget(release.spec));
  const visit = new ShareVisit(
    shared,
    member,
    client.identity,
    key,
    oneJob === undefined ? undefined : `${client.identity}\u0000${oneJob}`,
  );
  const budget = new BudgetVisit(
    budgets,
    member,
    budgetGroup(undefined, client.keyId),
    memberOf(release, startDemandIntervalMs(release, TUN), key),
  );
  try {
    const observed: MemberObserved = { source: 'platform', now, release, client };
    let polled = false;
    const exp = release.status?.export;
    if (exp?.jobId && !exp.finishedAt && exp.state !== 'completed') {
      visit.adopt(exp.jobId, exp.startedAt ?? now.toISOString());
      const answer = await visit.poll(client, recordedJob(exp));
      observed.poll = answer.kind === 'job' ? exportPoll(answer.job) : { kind: 'notFound' };
      polled = answer.polled;
    }
    const look: PlatformLook = { source: 'platform', observed, visit, polled, budget };
    const decision = decideOn(look, TUN);
    const reservation = claim(look, decision);
    try {
      held.release = { ...release, status: decision.status };
      const run: ReleaseRun = {
        get status() {
          return held.release.status ?? {};
        },
        signal: undefined,
        sent: () => {
          reservation?.sent();
          lender.sent?.();
        },
        commit: (step) => lender.commit(step),
        fail: (status, f, cause) => lender.fail(status, f, cause),
      };
      return await act({ look, decision, run, publish: (action) => publishLink(look, action, run) });
    } finally {
      reservation?.release();
    }
  } finally {
    visit.close();
  }
}

/** What a publish came to: `published` when the link came and the publish was committed. */
export interface Published {
  published: boolean;
  result: ReconcileResult;
}

/**
 * As publish-content.ts and fresh-link.ts publish, without the download and the target (the link's
 * expiry is what status keeps): the operator's own link step (link/job-link.ts: a served job's 404
 * is noted, a second one a while later makes the job gone), then the publish folded and committed
 * on `run`.
 */
async function publishLink(look: PlatformLook, action: Of<'publish'>, run: ReleaseRun): Promise<Published> {
  const snapshot = { now: look.observed.now, release: meant(look.observed.release, run) };
  const got = foldLink(snapshot, action.jobId, await askLink(look, action, run), TUN);
  if ('step' in got) return { published: false, result: await settle(run, got.step) };
  const { bundle } = got;
  const version =
    action.mode === 'NewContent' ? `v-${action.jobId.slice(0, 12)}` : (run.status.current?.version ?? '');
  const folded = afterPublish(snapshot, {
    mode: action.mode,
    ...recordedJob(action),
    version,
    expiresAt: bundle.expiresAt,
    wrote: true,
    ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
  });
  await run.commit(folded);
  return { published: true, result: { requeueAfterMs: 0 } };
}

/** The most times in any window [t, t + 1 h). */
export function busiestHour(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && (sorted[j] ?? 0) < (sorted[i] ?? 0) + HOUR) j++;
    most = Math.max(most, j - i);
  }
  return most;
}
