// When a release is looked at again: the export in flight's next poll, the next export due on its
// own (interval, retry), the link's renewal. Pure functions of the release's status and the clock.
import { HOUR_MS } from '../../api/index.ts';
import { type ExportObservations, nextPollDelayMs } from '../../api/poll-schedule.ts';
import { parseDuration, type StaticExportRelease } from '../../crd/index.ts';
import type { Status, Tunables } from './release-model.ts';

/** An export was started (or joined) and has not finished. */
export const inFlight = (s: Status) => Boolean(s.export?.jobId && !s.export.finishedAt);

/** What the status holds of the export in flight and the site's past exports, for the poll schedule. */
export function exportObservations(s: Status, now: Date): ExportObservations {
  const e = s.export ?? {};
  return {
    startedAt: e.startedAt ? Date.parse(e.startedAt) : now.getTime(),
    ...(e.state === undefined ? {} : { state: e.state }),
    samples: (e.progressSamples ?? []).map((p) => ({ at: Date.parse(p.at), progress: p.progress })),
    previousDurationsMs: (s.exportDurationsSeconds ?? []).map((sec) => sec * 1000),
  };
}

/**
 * When to poll the export in flight next (the schedule shared with the CLI); undefined once it
 * reached a final state. Right after a start (no poll yet) this is the first look.
 */
export function exportPollDelayMs(s: Status, now: Date): number | undefined {
  return nextPollDelayMs(exportObservations(s, now), now.getTime());
}

/** An export may take this many times the site's median before it counts as failed. */
export const EXPORT_DEADLINE_MEDIANS = 4;
/** What status.export.state says of an export that passed its deadline (exportDeadline). */
export const TIMED_OUT = 'timedOut';

/** The median of this site's recorded export durations (ms), if any are recorded. */
export function medianExportMs(s: Status): number | undefined {
  const took = [...(s.exportDurationsSeconds ?? [])].sort((a, b) => a - b);
  const mid = took[Math.floor((took.length - 1) / 2)];
  return mid === undefined ? undefined : mid * 1000;
}

/**
 * When the export in flight counts as failed (ms): a job the platform never ends, or reports in a
 * state this client does not know, would be polled for ever and hold up the release's interval and
 * triggers. EXPORT_DEADLINE_MEDIANS times the site's median export, at least the floor; without a
 * recorded duration, the default.
 */
export function exportDeadline(s: Status, tun: Tunables): number | undefined {
  const started = s.export?.startedAt;
  if (started === undefined) return undefined;
  const median = medianExportMs(s);
  const allowed =
    median === undefined
      ? tun.exportDeadlineMs
      : Math.max(tun.exportDeadlineFloorMs, EXPORT_DEADLINE_MEDIANS * median);
  return Date.parse(started) + allowed;
}

/** The last export ended without a publish (failed, timed out, refused by the gate) and nothing is served. */
function failedWithNothingServed(s: Status): boolean {
  const ended = s.export?.state === 'failed' || s.export?.state === TIMED_OUT;
  return (ended || s.export?.publishGateFailure !== undefined) && !s.current?.version;
}

/**
 * How long after a failed export a release serving nothing tries again: the retry delay, doubled
 * for each export in a row that ended without a publish (status.exportFailures), at most the
 * site's interval or an hour, whichever is shorter. A broken site then spends a few starts an
 * hour of its organization's budget, not twelve.
 */
export function retryDelayMs(release: StaticExportRelease, tun: Tunables): number {
  const failures = Math.max(1, release.status?.exportFailures ?? 1);
  const interval = (release.spec.interval ? parseDuration(release.spec.interval) : undefined) ?? HOUR_MS;
  const cap = Math.max(tun.exportRetryMs, Math.min(interval, HOUR_MS));
  // 2^failures overflows nothing: past the cap's exponent it is the cap.
  return Math.min(cap, tun.exportRetryMs * 2 ** Math.min(failures - 1, 30));
}

/** When the next export is due on its own (interval or retry after failure), if ever. */
export function nextExportDue(release: StaticExportRelease, tun: Tunables): number | undefined {
  const s = release.status ?? {};
  const started = s.export?.startedAt ? Date.parse(s.export.startedAt) : undefined;
  if (started === undefined) return undefined;
  const interval = release.spec.interval ? parseDuration(release.spec.interval) : undefined;
  const candidates = [
    interval === undefined ? undefined : started + interval,
    failedWithNothingServed(s) && s.export?.finishedAt
      ? Date.parse(s.export.finishedAt) + retryDelayMs(release, tun)
      : undefined,
  ].filter((t): t is number => t !== undefined);
  return candidates.length ? Math.min(...candidates) : undefined;
}

/**
 * How often this release asks for an export start on its own now (ms): its interval, or, while
 * it serves nothing and its exports fail, its retry delay when that is shorter. What the start
 * budget's demand (its overcommit) should count for it; undefined: only when triggered.
 */
export function startDemandIntervalMs(release: StaticExportRelease, tun: Tunables): number | undefined {
  if (release.spec.pinnedVersion) return undefined;
  const interval = release.spec.interval ? parseDuration(release.spec.interval) : undefined;
  if (!failedWithNothingServed(release.status ?? {})) return interval;
  const retry = retryDelayMs(release, tun);
  return interval === undefined ? retry : Math.min(interval, retry);
}

/** Until the next work due on its own: the link's renewal or the next export (a pinned release has none). */
export function untilNextWork(release: StaticExportRelease, now: Date, tun: Tunables): number | undefined {
  const s = release.status ?? {};
  const times = [
    s.current?.renewalTime ? Date.parse(s.current.renewalTime) : undefined,
    release.spec.pinnedVersion ? undefined : nextExportDue(release, tun),
  ].filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) - now.getTime() : undefined;
}

/**
 * A wait (a 409's, the hold after a 429, a start in doubt) cut short at the served link's renewal:
 * the renewal is made during any of them, so the link written does not expire meanwhile.
 */
export function untilRenewalOr(status: Status, waitMs: number, now: Date): number {
  const c = status.current;
  if (!c?.jobId || !c.renewalTime) return waitMs;
  return Math.max(0, Math.min(waitMs, Date.parse(c.renewalTime) - now.getTime()));
}

/** When to renew a link: `renewBefore` ahead of expiry; default (or when too long) a third of its lifetime. */
export function renewalTime(expiresAt: Date, issuedAt: Date, renewBefore: string | undefined): Date {
  const lifetime = expiresAt.getTime() - issuedAt.getTime();
  const requested = renewBefore ? parseDuration(renewBefore) : undefined;
  const before = requested !== undefined && requested < lifetime ? requested : lifetime / 3;
  return new Date(expiresAt.getTime() - before);
}

/** While another release of the group is starting the export, look again this soon (it also wakes us). */
export const JOIN_WAIT_MS = 1_000;
