// What the start-budget benchmarks (budget.ts, budget-faults.ts) share: their virtual day's clock,
// the releases as the API server holds them at its start, and one release's reconcile on the
// platform's current export API as the operator runs it: observe (its share and budget visits, the
// recorded job polled once for its share group, as export/platform-export.ts), decide and claim
// (release-reconciler.ts `decideOn` and `claim`), the start or the publish as release-actions.ts
// performs it, folded back into status (after-export.ts). No target and no download: a version is
// derived from the job id. Each bench keeps its own bookkeeping of the outcomes.
import {
  type AdminApiClient,
  ExportBusyError,
  ExportStartLimitError,
  NotFoundError,
  RevisionUnavailableError,
  startMayHaveCreatedJob,
} from '../src/api/index.ts';
import type { Reservation } from '../src/controllers/reconciler-base.ts';
import {
  BudgetVisit,
  budgetGroup,
  memberOf,
  type StartBudgets,
} from '../src/controllers/static-export-release/budget/start-budget.ts';
import {
  afterPublish,
  afterServedJobGone,
  afterServedJobMissing,
  afterStart,
  afterStartBusy,
  afterStartFailed,
  afterStartRefused,
  servedJobConfirmIn,
} from '../src/controllers/static-export-release/export/after-export.ts';
import {
  exportTarget,
  jobRef,
  recordedJob,
} from '../src/controllers/static-export-release/export/export-site.ts';
import { exportPoll } from '../src/controllers/static-export-release/export/platform-export.ts';
import { busyWaitMs } from '../src/controllers/static-export-release/release-actions.ts';
import {
  type Action,
  DEFAULT_TUNABLES,
  type Decision,
  type Folded,
  type PlatformObserved,
} from '../src/controllers/static-export-release/release-model.ts';
import { claim, decideOn } from '../src/controllers/static-export-release/release-reconciler.ts';
import {
  exportPollDelayMs,
  startDemandIntervalMs,
  untilRenewalOr,
} from '../src/controllers/static-export-release/schedule.ts';
import { ShareVisit } from '../src/controllers/static-export-release/share/share-visit.ts';
import {
  memberKey,
  type SharedExports,
  shareKey,
} from '../src/controllers/static-export-release/share/shared-exports.ts';
import type { Look } from '../src/controllers/static-export-release/sources/source.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../src/crd/index.ts';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** When the virtual day starts. */
export const START = Date.parse('2026-01-01T00:00:00Z');
const TUN = DEFAULT_TUNABLES;

type Status = NonNullable<StaticExportRelease['status']>;

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

/** What one operator reconciles with: its client (the key its Secret holds now), budgets and share groups. */
export interface Reconciling {
  client: AdminApiClient;
  budgets: StartBudgets;
  shared: SharedExports;
}

/** A release's look, the decision on it and that decision's claim on the budget. */
export interface Claimed {
  look: Look;
  decision: Decision;
  reservation: Reservation | undefined;
}

/** observe -> decide and claim; `act` runs with them, and the claim and the visit are let go after. */
export async function reconcileRelease<T>(
  { client, budgets, shared }: Reconciling,
  release: StaticExportRelease,
  now: Date,
  act: (claimed: Claimed) => Promise<T>,
): Promise<T> {
  const member = memberKey(release);
  const key = shareKey(client.identity, release.spec);
  const visit = new ShareVisit(
    shared,
    member,
    client.identity,
    key,
    `${client.identity}\u0000${release.spec.projectId}`,
  );
  const budget = new BudgetVisit(
    budgets,
    member,
    budgetGroup(undefined, client.keyId),
    memberOf(release, startDemandIntervalMs(release, TUN), key),
  );
  try {
    const observed: PlatformObserved = { source: 'platform', now, release, client };
    let polled = false;
    const exp = release.status?.export;
    if (exp?.jobId && !exp.finishedAt && exp.state !== 'completed') {
      visit.adopt(exp.jobId, exp.startedAt ?? now.toISOString());
      const answer = await visit.poll(client, {
        jobId: exp.jobId,
        ...(exp.projectId === undefined ? {} : { projectId: exp.projectId }),
      });
      observed.poll = answer.kind === 'job' ? exportPoll(answer.job) : { kind: 'notFound' };
      polled = answer.polled;
    }
    const look: Look = { observed, visit, polled, budget };
    const decision = decideOn(look, TUN);
    const reservation = claim(look, decision);
    try {
      return await act({ look, decision, reservation });
    } finally {
      reservation?.release();
    }
  } finally {
    visit.close();
  }
}

/** A start's outcome folded, and when the release looks next; or a failure for the work queue. */
export type Started =
  | { kind: 'started' | 'busy' | 'refused'; folded: Folded; nextMs: number }
  | { kind: 'failed'; status: Status; error: unknown };

/**
 * As release-actions.ts `start` and `startRefused`: the call for `release` (its status the
 * decision's), `sent` once the request may count against the hour (a job created, a 409, a 429,
 * an answer that may follow the job's creation). A 409 or 429 keeps its slot, holding the project
 * or the group; any other failure started nothing and gives the slot back.
 */
export async function startExport(
  client: AdminApiClient,
  release: StaticExportRelease,
  { look: { visit, budget }, reservation }: Claimed,
  now: Date,
  sent: () => void = () => {},
): Promise<Started> {
  const snapshot = { now, release };
  const status = release.status ?? {};
  const counted = () => {
    reservation?.sent();
    sent();
  };
  try {
    const started = await client.startExport(exportTarget(release.spec));
    counted();
    const folded = afterStart(snapshot, started.jobId, started.status ?? 'queued');
    visit?.started(started.jobId, now.toISOString());
    return { kind: 'started', folded, nextMs: exportPollDelayMs(folded.status, now) ?? 0 };
  } catch (e) {
    if (e instanceof ExportBusyError) {
      counted();
      visit?.close();
      const waitMs = busyWaitMs(status);
      budget?.busy(now.getTime() + waitMs);
      const folded = afterStartBusy(snapshot, waitMs);
      return { kind: 'busy', folded, nextMs: untilRenewalOr(folded.status, waitMs, now) };
    }
    if (e instanceof ExportStartLimitError && budget) {
      counted();
      visit?.close();
      const until = budget.refused(e.retryAfterMs);
      const folded = afterStartRefused(snapshot, until);
      return { kind: 'refused', folded, nextMs: untilRenewalOr(folded.status, until - now.getTime(), now) };
    }
    const mayHaveStarted = startMayHaveCreatedJob(e);
    if (mayHaveStarted) counted();
    visit?.startFailed();
    return { kind: 'failed', status: afterStartFailed(status, mayHaveStarted), error: e };
  }
}

/**
 * A publish's outcome folded (none while a served job's second 404 is awaited), and when the
 * release looks next.
 */
export type Published = {
  kind: 'published' | 'missing' | 'gone' | 'confirming';
  folded?: Folded;
  nextMs: number;
};

/**
 * As release-actions.ts `publish` without the download and the target (the link's expiry is what
 * status keeps), and `servedJobGone` without pins: the link asked through the share group
 * (`asked` when this release asks the platform itself). A served job's first 404 is noted, a
 * second one a while later makes it gone, and the release exports anew ahead of scheduled starts.
 */
export async function publishLink(
  client: AdminApiClient,
  release: StaticExportRelease,
  { look: { visit } }: Claimed,
  action: Extract<Action, { kind: 'publish' }>,
  now: Date,
  asked: () => void = () => {},
): Promise<Published> {
  const snapshot = { now, release };
  const status = release.status ?? {};
  let bundle: Awaited<ReturnType<AdminApiClient['exportLink']>>;
  try {
    bundle = await (visit as ShareVisit).link(action.jobId, () => {
      asked();
      return client.exportLink(jobRef(action));
    });
  } catch (e) {
    const purged = e instanceof NotFoundError && !(e instanceof RevisionUnavailableError);
    if (!purged || action.mode === 'NewContent') throw e;
    const confirmIn = status.current?.jobId === action.jobId ? servedJobConfirmIn(status, now, TUN) : 0;
    if (confirmIn === undefined)
      return { kind: 'missing', folded: afterServedJobMissing(snapshot), nextMs: TUN.jobGoneConfirmMs };
    if (confirmIn > 0) return { kind: 'confirming', nextMs: confirmIn };
    return { kind: 'gone', folded: afterServedJobGone(snapshot), nextMs: 0 };
  }
  const version =
    action.mode === 'NewContent' ? `v-${action.jobId.slice(0, 12)}` : (status.current?.version ?? '');
  const folded = afterPublish(snapshot, {
    mode: action.mode,
    ...recordedJob(action),
    version,
    expiresAt: bundle.expiresAt,
    wrote: true,
    ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
  });
  return { kind: 'published', folded, nextMs: 0 };
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
