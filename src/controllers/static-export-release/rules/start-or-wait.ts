import type { StaticExportRelease } from '../../../crd/index.ts';
import { none, start } from '../decision.ts';
import type { Decision, EventNote, PlatformCase, StartReason, Status, Tunables } from '../model.ts';
import { nextExportDue } from '../schedule.ts';
import type { BudgetView, Overcommit, StartAsk } from '../start-budget.ts';
import { startReason } from '../start-reason.ts';
import { renewLink } from './renew-link.ts';

type Waiting = NonNullable<Status['waiting']>;

/**
 * Its place in its group's queue: a manual request first, else when its start came due (a
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
  return { dueAt: now.getTime(), requested: reason === 'Requested' };
}

/**
 * The status as the rules read it: a wait for the budget is decided afresh each time (its `since`
 * kept while it lasts), a wait out of a 409 holds until its time.
 */
export function withoutWaitOver(status: Status, now: Date): Status {
  const w = status.waiting;
  if (!w || (w.reason === 'ExportBusy' && now.getTime() < Date.parse(w.until))) return status;
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
 * deployment (a 409, waited out) or, in the current export API, its group's hourly budget has no
 * slot for it yet: it then waits in the group's queue, and says so.
 */
export function startOrWait(c: PlatformCase, reason: StartReason): Decision {
  const { o, status, tun } = c;
  const { now, budget, release } = o;
  const busy = status.waiting?.reason === 'ExportBusy' ? status.waiting : undefined;
  if (busy) return holding(c, status, Date.parse(busy.until));
  const slot = budget?.slotAt(startAsk(release, now, tun), now.getTime());
  if (!budget || slot === undefined || slot <= now.getTime()) {
    const { waiting: _, ...rest } = status;
    return start(rest, now, reason);
  }
  const refused =
    budget.blockedUntil === undefined
      ? ''
      : ` The platform refused a start (429, more than ${budget.limit} per organization and hour) and is not asked again before ${new Date(budget.blockedUntil).toISOString()}.`;
  const over = budget.overcommit ? ` ${overcommitNote(budget, budget.overcommit)}.` : '';
  return waitFor(c, slot, {
    reason: 'WaitingForStartBudget',
    message: `Waiting for a start slot: start budget group ${budget.group} has used ${budget.used} of its ${budget.limit} export starts in the last hour; this release starts at ${new Date(slot).toISOString()}.${refused}${over}`,
  });
}
