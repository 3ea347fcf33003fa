// When a release is looked at again: the export in flight's next poll, the next export due on its
// own (interval, retry), the link's renewal. Pure functions of the release's status and the clock.
import { type ExportObservations, nextPollDelayMs } from '../../api/poll-schedule.ts';
import { parseDuration, type StaticExportRelease } from '../../crd/index.ts';
import type { Status, Tunables } from './model.ts';

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

/** When the next export is due on its own (interval or retry after failure), if ever. */
export function nextExportDue(release: StaticExportRelease, tun: Tunables): number | undefined {
  const s = release.status ?? {};
  const started = s.export?.startedAt ? Date.parse(s.export.startedAt) : undefined;
  if (started === undefined) return undefined;
  const interval = release.spec.interval ? parseDuration(release.spec.interval) : undefined;
  const failedWithNothingServed =
    (s.export?.state === 'failed' || s.export?.publishGateFailure !== undefined) && !s.current?.version;
  const candidates = [
    interval === undefined ? undefined : started + interval,
    failedWithNothingServed && s.export?.finishedAt
      ? Date.parse(s.export.finishedAt) + tun.exportRetryMs
      : undefined,
  ].filter((t): t is number => t !== undefined);
  return candidates.length ? Math.min(...candidates) : undefined;
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

/** When to renew a link: `renewBefore` ahead of expiry; default (or when too long) a third of its lifetime. */
export function renewalTime(expiresAt: Date, issuedAt: Date, renewBefore: string | undefined): Date {
  const lifetime = expiresAt.getTime() - issuedAt.getTime();
  const requested = renewBefore ? parseDuration(renewBefore) : undefined;
  const before = requested !== undefined && requested < lifetime ? requested : lifetime / 3;
  return new Date(expiresAt.getTime() - before);
}

/** While another release of the group is starting the export, look again this soon (it also wakes us). */
export const JOIN_WAIT_MS = 1_000;
