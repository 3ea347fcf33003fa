// When to look at an export job next: ONE schedule for the operator and the CLI, a pure function of
// what was seen of this job (progress samples with their times), how long the site's previous
// exports took and the clock. The platform allows about 100 admin requests per key and minute,
// shared by every release of an organisation, so each poll has to earn its place: sparse while the
// job is far from its expected end, at that end, close together only once it is overdue.
import { EXPORT_FINAL_STATUSES } from './schemas.ts';

/** One poll that reported progress (0-100). Times are epoch milliseconds. */
export interface ProgressSample {
  at: number;
  progress: number;
}

export interface ExportObservations {
  /** When the export was started. */
  startedAt: number;
  /** The job's last reported state, if it was polled at all. */
  state?: string;
  /** Progress samples as kept by `withSample` (oldest first). */
  samples?: readonly ProgressSample[];
  /** How long this site's previous exports took (ms), newest first. */
  previousDurationsMs?: readonly number[];
}

export interface PollSchedule {
  /** The first look after a start when nothing is known: small sites are done at once. */
  firstLookMs: number;
  /** No two polls closer than this. */
  minDelayMs: number;
  /** Never longer apart than this, whatever the estimate says: a stuck or non-linear job is still seen. */
  ceilingMs: number;
  /** Without any estimate, or once overdue, polls are at most this far apart (the detection lag's bound). */
  backoffCeilingMs: number;
  /** Once overdue, polls are at most this fraction of the time elapsed apart (lag ≤ this share of the duration). */
  overdueFraction: number;
}

export const DEFAULT_POLL_SCHEDULE: PollSchedule = {
  firstLookMs: 250,
  minDelayMs: 1_000,
  ceilingMs: 60_000,
  backoffCeilingMs: 15_000,
  overdueFraction: 0.1,
};

/** How many progress samples are kept: the first (the rate's baseline) and the latest changes. */
export const SAMPLE_LIMIT = 4;
/** How many previous durations are kept and considered. */
export const DURATION_LIMIT = 5;

/**
 * Adds a poll's progress to the kept samples. A sample that repeats the last progress is dropped,
 * so the last one kept says when progress last moved (a stall shows as time passing since then);
 * the first is kept as the baseline of the rate, the others are the latest changes.
 */
export function withSample(samples: readonly ProgressSample[], s: ProgressSample): ProgressSample[] {
  const last = samples[samples.length - 1];
  if (last && s.progress <= last.progress) return [...samples];
  const next = [...samples, s];
  return next.length <= SAMPLE_LIMIT ? next : [next[0] as ProgressSample, ...next.slice(-(SAMPLE_LIMIT - 1))];
}

/** Adds a finished export's duration to the kept ones (newest first). */
export function withDuration(durations: readonly number[] | undefined, d: number): number[] {
  return [d, ...(durations ?? [])].slice(0, DURATION_LIMIT);
}

/** Folds one poll's answer into what is known of the job. */
export function observe(
  o: ExportObservations,
  seen: { state: string; progress?: number | undefined },
  at: number,
): ExportObservations {
  const samples =
    seen.progress === undefined || EXPORT_FINAL_STATUSES.has(seen.state)
      ? (o.samples ?? [])
      : withSample(o.samples ?? [], { at, progress: seen.progress });
  return { ...o, state: seen.state, ...(samples.length ? { samples } : {}) };
}

/**
 * How long a completed export took: by the platform's own timestamps when it gives both (no lag,
 * no clock skew), else from our start to when completion was seen.
 */
export function completedDurationMs(
  job: { createdAt?: string | undefined; updatedAt?: string | undefined },
  startedAt: number,
  seenAt: number,
): number {
  const created = job.createdAt ? Date.parse(job.createdAt) : Number.NaN;
  const updated = job.updatedAt ? Date.parse(job.updatedAt) : Number.NaN;
  return updated >= created ? updated - created : Math.max(0, seenAt - startedAt);
}

function median(values: readonly number[]): number | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Expected end from progress: the rate from the first sample to the last change, extrapolated
 * from that change. Undefined with fewer than two distinct values.
 */
export function progressEstimate(samples: readonly ProgressSample[]): number | undefined {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (!first || !last || last.progress <= first.progress || last.at <= first.at) return undefined;
  const rate = (last.progress - first.progress) / (last.at - first.at);
  return last.at + Math.max(0, 100 - last.progress) / rate;
}

/** Expected end from the site's previous exports (their median), if any. */
export function historyEstimate(o: ExportObservations): number | undefined {
  const typical = median(o.previousDurationsMs ?? []);
  return typical === undefined ? undefined : o.startedAt + typical;
}

/**
 * Milliseconds until the next poll, or undefined when the job reached a final state (no poll after
 * that). The expected end comes from progress while it moves, else from the site's history; the
 * schedule polls at that end (halving the way there, never more than `ceilingMs` apart), and once
 * the job is overdue (or nothing is known) backs off from the last expected end (or the start),
 * doubling up to `backoffCeilingMs` and `overdueFraction` of the time elapsed.
 */
export function nextPollDelayMs(
  o: ExportObservations,
  now: number,
  schedule: PollSchedule = DEFAULT_POLL_SCHEDULE,
): number | undefined {
  if (o.state !== undefined && EXPORT_FINAL_STATUSES.has(o.state)) return undefined;
  const byProgress = progressEstimate(o.samples ?? []);
  const byHistory = historyEstimate(o);
  // The earlier of the estimates still ahead: when they disagree (a stall, a site that grew) one
  // more call is cheaper than a late look.
  const upcoming = [byProgress, byHistory].filter((t): t is number => t !== undefined && t > now);
  const ahead = upcoming.length ? Math.min(...upcoming) : undefined;
  const elapsed = now - o.startedAt;
  // Right after the start the first look may come sooner than minDelayMs: small sites are done at once.
  const floor = elapsed < schedule.firstLookMs ? schedule.firstLookMs - elapsed : schedule.minDelayMs;
  const bounded = (ms: number) => Math.round(Math.min(schedule.ceilingMs, Math.max(floor, ms)));
  if (ahead !== undefined) {
    const remaining = ahead - now;
    return bounded(remaining <= schedule.ceilingMs ? remaining : remaining / 2);
  }
  if (elapsed < schedule.firstLookMs) return bounded(0);
  // Overdue (every estimate passed) or nothing to estimate from: back off, doubling from when the
  // job was last seen to move (its last progress change, the end its history promised, else its
  // start), so a slightly early estimate costs one more call and a stalled job is still seen
  // within the bound.
  const lastChange = byProgress === undefined ? undefined : o.samples?.[o.samples.length - 1]?.at;
  const known = [lastChange, byHistory].filter((t): t is number => t !== undefined);
  const since = known.length ? Math.max(...known) : o.startedAt;
  const cap = known.length
    ? Math.min(schedule.backoffCeilingMs, schedule.overdueFraction * elapsed)
    : schedule.backoffCeilingMs;
  return bounded(Math.min(cap, now - since));
}
