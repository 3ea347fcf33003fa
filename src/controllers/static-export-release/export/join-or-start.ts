// The start rung: join the share group's export in flight, else start one when the release has a
// reason to (startOrWait: at once, or after a 409's wait or at the start budget's slot; a vanished
// job takes it too). The waits' helpers that decide and the reconciler call live with it: startAsk
// (the release's place in its group's queue), withoutWaitOver (a wait that is over is dropped) and
// overcommitEvent (the group's overcommit Warning).
import type { StaticExportRelease } from '../../../crd/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../../../project.ts';
import { type Rule, rule } from '../../rule-ladder.ts';
import type { BudgetView, Overcommit, StartAsk } from '../budget/start-budget.ts';
import { renewLink } from '../link/link-rules.ts';
import { awaiting, none, start } from '../release-decisions.ts';
import type { Decision, EventNote, PlatformCase, StartReason, Status, Tunables } from '../release-model.ts';
import { JOIN_WAIT_MS, nextExportDue } from '../schedule.ts';
import type { SharedExport } from '../share/shared-exports.ts';
import { siteName, startedRevision } from './export-site.ts';
import { withExport } from './start-export.ts';
import { goesFirst, startReason } from './start-reason.ts';

/**
 * Whether the group's export in flight is one this release should take part in: not its own job
 * already, and either newer than its last export (another release's trigger or interval exports
 * the site for all) or wanted now anyway (`wants`: this release has its own reason to export).
 */
function joinable(status: Status, shared: SharedExport | undefined, wants: boolean): boolean {
  if (!shared || (shared.jobId !== undefined && shared.jobId === status.export?.jobId)) return false;
  const last = status.export?.startedAt;
  return wants || last === undefined || Date.parse(shared.startedAt) > Date.parse(last);
}

/** Joining the group's export: its job id is recorded as this release's own, nothing is sent. */
function joined(
  release: StaticExportRelease,
  status: Status,
  shared: SharedExport & { jobId: string },
): Decision {
  const s = withExport(release, status, {
    jobId: shared.jobId,
    state: shared.state ?? 'queued',
    startedAt: shared.startedAt,
    joined: true,
    ...startedRevision(release.spec),
  });
  // The job is polled at once (a member's poll answers it if fresh).
  return none(s, 0, [
    {
      type: 'Normal',
      reason: 'ExportJoined',
      note: `Joined export job ${shared.jobId} for ${siteName(release.spec)}, started for a release with the same key and export options; no second export is started`,
    },
  ]);
}

/**
 * An unpinned release joins its group's export in flight when it should take part in it, and
 * starts its own when it has a reason to export (and no other release of the site may have one).
 */
export const joinOrStart: Rule<PlatformCase, Decision> = rule('joinOrStart', ({ o, status, tun }) => {
  const { release, now, shared } = o;
  if (release.spec.pinnedVersion) return undefined;
  const reason = startReason(release, now, tun);
  if (shared && joinable(status, shared, reason !== undefined)) {
    const { jobId } = shared;
    if (jobId !== undefined) return joined(release, status, { ...shared, jobId });
    // Another release of the group is starting it: join once it has an id, never start a second.
    return awaiting(status, JOIN_WAIT_MS);
  }
  if (!reason) return undefined;
  // Looked at again once every release is known: it may join the job one of them records.
  if (o.peersUnknown) return awaiting(status, JOIN_WAIT_MS);
  return startOrWait({ o, status, tun }, reason);
});

type Waiting = NonNullable<Status['waiting']>;

/** While a sibling's export runs, look again this often (its end also wakes the release). */
const SIBLING_LOOK_MS = 5 * 60_000;

/**
 * Its place in its group's queue: a manual request or a purged served job's replacement first, else when its start came due (a
 * scheduled one from its last start, which an overcommitted group stretches to its fair interval).
 */
export function startAsk(release: StaticExportRelease, now: Date, tun: Tunables): StartAsk {
  const reason = startReason(release, now, tun);
  const at = (t: number | undefined) => Math.min(t ?? now.getTime(), now.getTime());
  if (reason === 'Interval' || reason === 'Retry') {
    const last = release.status?.export?.startedAt;
    return {
      dueAt: at(nextExportDue(release, tun)),
      requested: false,
      ...(last === undefined ? {} : { lastStart: Date.parse(last) }),
    };
  }
  const created = release.metadata.creationTimestamp;
  if (reason === 'Initial' && created !== undefined)
    return { dueAt: at(new Date(created).getTime()), requested: false };
  return { dueAt: now.getTime(), requested: goesFirst(reason) };
}

/**
 * The status as the rules read it: a wait for the budget or for a sibling's job is decided afresh
 * each time (its `since` kept while it lasts), a wait out of a 409 holds until its time.
 */
export function withoutWaitOver(status: Status, now: Date): Status {
  const w = status.waiting;
  const holds = w?.reason === 'ExportBusy' && w.sibling === undefined && now.getTime() < Date.parse(w.until);
  if (!w || holds) return status;
  const { waiting: _, ...rest } = status;
  return rest;
}

const overcommitNote = (v: BudgetView, o: Overcommit) =>
  `The intervals of the group's ${o.sites} sites want ${o.wanted} starts per hour, more than its ${v.limit}: an interval of at least ${o.fitsMinutes}m for every site fits; meanwhile every interval shorter than ${o.fairMinutes}m waits that long, an equal share each`;

/** The Warning that a group's intervals want more than its budget: once per group (the budget remembers). */
export function overcommitEvent(v: BudgetView | undefined): EventNote[] {
  if (!v?.announce || !v.overcommit) return [];
  return [
    {
      type: 'Warning',
      reason: 'StartBudgetOvercommitted',
      note: `Start budget group ${v.group}: ${overcommitNote(v, v.overcommit)}`,
    },
  ];
}

/**
 * A wait (for a start slot, or out of a 409) holds up no renewal of the link served meanwhile: when
 * it is due, the renewal is the action and the wait stays in status; else the release looks again
 * at the wait's end or the renewal, whichever comes first.
 */
function holding(c: PlatformCase, status: Status, until: number): Decision {
  const renew = renewLink.apply({ ...c, status });
  if (renew) return renew;
  // Not due yet (else renewed above); none for a served job that is gone.
  const served = status.current;
  const renewal = served?.jobId && served.renewalTime ? Date.parse(served.renewalTime) : until;
  return none(status, Math.min(until, renewal) - c.o.now.getTime());
}

function waitFor(c: PlatformCase, until: number, w: Omit<Waiting, 'since' | 'until'>): Decision {
  const { status, o } = c;
  // As stored: the classification dropped the wait for the budget, to decide it afresh.
  const found = o.release.status?.waiting;
  const since = found?.reason === w.reason ? found.since : o.now.toISOString();
  const waiting: Waiting = { ...w, since, until: new Date(until).toISOString() };
  return holding(c, { ...status, waiting }, until);
}

/**
 * A release that has a reason to export starts now, unless the platform is busy with a job of its
 * deployment (a 409, waited out: its own, or one another release of the project met) or, in the
 * current export API, its group's hourly budget has no slot for it yet: it then waits in the
 * group's queue (the decision says so: `queue`), and says so.
 */
export function startOrWait(c: PlatformCase, reason: StartReason): Decision {
  const { o, status, tun } = c;
  const { now, budget, release } = o;
  const busy = status.waiting?.reason === 'ExportBusy' ? status.waiting : undefined;
  if (busy) return holding(c, status, Date.parse(busy.until));
  const { sibling } = o;
  if (sibling) {
    const job = sibling.jobId === undefined ? 'its export, being started' : `export job ${sibling.jobId}`;
    return waitFor(c, now.getTime() + SIBLING_LOOK_MS, {
      reason: 'ExportBusy',
      message: `Waiting for ${job} of release ${sibling.release}, the same project with another base path: the platform runs one export of a project at a time (409), so this release starts when that one ends, without asking before`,
      sibling: sibling.release,
    });
  }
  if (budget?.busyUntil !== undefined) {
    const until = new Date(budget.busyUntil).toISOString();
    return waitFor(c, budget.busyUntil, {
      reason: 'ExportBusy',
      message: `Another release of project ${release.spec.projectId} met an active export job of the project (409): every start request may count against the hourly budget, so no release of the project asks again before ${until}`,
    });
  }
  const ask = startAsk(release, now, tun);
  const slot = budget?.slotAt(ask, now.getTime());
  if (!budget || slot === undefined || slot <= now.getTime()) {
    const { waiting: _, ...rest } = status;
    return start(rest, now, reason, budget !== undefined);
  }
  const blocked = budget.blockedUntil === undefined ? undefined : new Date(budget.blockedUntil).toISOString();
  const refused =
    blocked === undefined
      ? ''
      : ` The platform refused a start (429: the organization's ${EXPORT_STARTS_PER_HOUR} starts of the hour are spent, by this group or by others) and is not asked again before ${blocked}.`;
  const over = budget.overcommit ? ` ${overcommitNote(budget, budget.overcommit)}.` : '';
  const d = waitFor(c, slot, {
    reason: 'WaitingForStartBudget',
    message: `Waiting for a start slot: start budget group ${budget.group} has used ${budget.used} of its ${budget.limit} export starts in the last hour; this release starts at ${new Date(slot).toISOString()}.${refused}${over}`,
    ...(blocked === undefined ? {} : { refusedUntil: blocked }),
  });
  return { ...d, queue: ask };
}
