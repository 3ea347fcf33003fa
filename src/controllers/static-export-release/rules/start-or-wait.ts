import type { StaticExportRelease } from '../../../crd/index.ts';
import { none, start } from '../decision.ts';
import type { Decision, EventNote, PlatformCase, StartReason, Status, Tunables } from '../model.ts';
import { nextExportDue } from '../schedule.ts';
import type { BudgetView, Overcommit, StartAsk } from '../start-budget.ts';
import { startReason } from '../start-reason.ts';
import { renewLink } from './renew-link.ts';

type Waiting = NonNullable<Status['waiting']>;

/** Its place in its group's queue: a manual request first, else when its start came due. */
export function startAsk(release: StaticExportRelease, now: Date, tun: Tunables): StartAsk {
  const reason = startReason(release, now, tun);
  const created = release.metadata.creationTimestamp;
  const dueAt =
    reason === 'Interval' || reason === 'Retry'
      ? nextExportDue(release, tun)
      : reason === 'Initial' && created !== undefined
        ? new Date(created).getTime()
        : undefined;
  return { dueAt: Math.min(dueAt ?? now.getTime(), now.getTime()), requested: reason === 'Requested' };
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
  `The intervals of the group's ${o.sites} sites want ${o.wanted} starts per hour, more than its ${v.limit}: an interval of at least ${o.fitsMinutes}m for every site fits`;

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
  const since = status.waiting?.reason === w.reason ? status.waiting.since : o.now.toISOString();
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
  const slot = budget?.slotAt(startAsk(release, now, tun));
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
