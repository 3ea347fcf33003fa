// When to look at an export job next: ONE schedule for the operator and the CLI, a pure function of
// what was seen of this job (progress samples with their times), how long the site's previous
// exports took and the clock. The platform allows about 100 admin requests per key and minute,
// shared by every release of an organisation, so each poll has to earn its place: sparse while the
// job is far from its expected end, at that end, close together only once it is overdue.
import { DURATION_LIMIT, SAMPLE_LIMIT } from '../crd/limits.ts';
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

interface PollSchedule {
  /** No look sooner than this after a start: a site whose exports take less is done by then. */
  earliestLookMs: number;
  /**
   * With nothing known of the site, the first look: a small site is done by then (one call), a
   * larger one shows progress to estimate its end from, or that it is still queued.
   */
  firstLookMs: number;
  /**
   * Still nothing to estimate from after the first look: the next look comes this long after the
   * start (the platform's own sample polls every 10 s), then the backoff.
   */
  blindLookMs: number;
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
  earliestLookMs: 250,
  firstLookMs: 1_000,
  blindLookMs: 10_000,
  minDelayMs: 1_000,
  ceilingMs: 60_000,
  backoffCeilingMs: 15_000,
  overdueFraction: 0.1,
};

/**
 * Adds a poll's progress to the kept samples. A sample that repeats the last progress is dropped,
 * so the last one kept says when progress last moved (a stall shows as time passing since then);
 * the first is kept as the baseline of the rate, the others are the latest changes. Nothing done
 * yet (0 %, queued) is kept only until progress was seen twice, and its latest look only: the work
 * began after it, so it bounds a guess from the first progress seen (see `progressGuess`).
 */
export function withSample(samples: readonly ProgressSample[], s: ProgressSample): ProgressSample[] {
  const last = samples[samples.length - 1];
  if (last?.progress === 0 && s.progress === 0) return [...samples.slice(0, -1), s];
  if (last && s.progress <= last.progress) return [...samples];
  const added = [...samples, s];
  const next = added.length > 2 && added[0]?.progress === 0 ? added.slice(1) : added;
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
  // A queued job reports no progress but has done nothing yet: 0 %, a baseline for the rate.
  const progress = seen.progress ?? (seen.state === 'queued' ? 0 : undefined);
  const samples =
    progress === undefined || EXPORT_FINAL_STATUSES.has(seen.state)
      ? (o.samples ?? [])
      : withSample(o.samples ?? [], { at, progress });
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

/** Where progress moving from `a` to `b` reaches 100 %, extrapolated from `b`. */
function endOf(a: ProgressSample, b: ProgressSample): number | undefined {
  if (b.progress <= a.progress || b.at <= a.at) return undefined;
  return b.at + (Math.max(0, 100 - b.progress) * (b.at - a.at)) / (b.progress - a.progress);
}

/**
 * Expected end from progress: the rate from the first progress seen to the last change,
 * extrapolated from that change. Undefined until two looks saw different progress above 0 %.
 */
function progressEstimate(samples: readonly ProgressSample[]): number | undefined {
  const first = samples.find((s) => s.progress > 0);
  const last = samples.at(-1);
  return first && last ? endOf(first, last) : undefined;
}

/**
 * A guess from the only look that saw progress: as if the work began at the last look that saw
 * none, or at the start. It began later if the job was queued meanwhile, so the guess is late, the
 * more so the less progress was seen; exact for a job that progresses evenly from its start.
 */
function progressGuess(samples: readonly ProgressSample[], startedAt: number): number | undefined {
  const last = samples.at(-1);
  if (!last || progressEstimate(samples) !== undefined) return undefined;
  return endOf(samples.at(-2) ?? { at: startedAt, progress: 0 }, last);
}

/** Expected end from the site's previous exports (their median), if any. */
function historyEstimate(o: ExportObservations): number | undefined {
  const typical = median(o.previousDurationsMs ?? []);
  return typical === undefined ? undefined : o.startedAt + typical;
}

/**
 * Milliseconds until the next poll, or undefined when the job reached a final state (no poll after
 * that). The expected end comes from progress while it moves, else from the site's history; the
 * schedule polls at that end, never more than `ceilingMs` apart (each look on the way refines the
 * estimate). Once the job is overdue it polls closer again, from the last sign of life, doubling up
 * to `backoffCeilingMs` and `overdueFraction` of the time elapsed. With nothing to estimate from
 * (no history, no progress yet) it looks at `firstLookMs`, at `blindLookMs`, then backs off from
 * the start, doubling up to `backoffCeilingMs`.
 */
export function nextPollDelayMs(
  o: ExportObservations,
  now: number,
  schedule: PollSchedule = DEFAULT_POLL_SCHEDULE,
): number | undefined {
  if (o.state !== undefined && EXPORT_FINAL_STATUSES.has(o.state)) return undefined;
  const samples = o.samples ?? [];
  const byProgress = progressEstimate(samples);
  const byHistory = historyEstimate(o);
  // The earlier of the estimates still ahead: when they disagree (a stall, a site that grew) one
  // more call is cheaper than a late look.
  const upcoming = [byProgress, byHistory].filter((t): t is number => t !== undefined && t > now);
  const ahead = upcoming.length ? Math.min(...upcoming) : undefined;
  const elapsed = now - o.startedAt;
  // Right after the start a look may come sooner than minDelayMs: a site whose exports take a
  // moment is done at once.
  const floor = elapsed < schedule.earliestLookMs ? schedule.earliestLookMs - elapsed : schedule.minDelayMs;
  const bounded = (ms: number) => Math.round(Math.min(schedule.ceilingMs, Math.max(floor, ms)));
  if (ahead !== undefined) return bounded(ahead - now);
  const lastChange = byProgress === undefined ? undefined : o.samples?.[o.samples.length - 1]?.at;
  const known = [lastChange, byHistory].filter((t): t is number => t !== undefined);
  if (!known.length) {
    // Nothing to estimate from: a first look (small sites are done), one when the platform's
    // sample would look, then doubling from the start up to the backoff ceiling (the lag's bound).
    const blind =
      elapsed < schedule.firstLookMs
        ? schedule.firstLookMs - elapsed
        : elapsed < schedule.blindLookMs
          ? schedule.blindLookMs - elapsed
          : Math.min(schedule.backoffCeilingMs, elapsed);
    // A guess from the first progress seen brings the next look forward (an export that
    // progresses evenly from its start is seen at its end), never later: it may be far too late.
    const guess = progressGuess(samples, o.startedAt);
    return bounded(guess !== undefined && guess > now ? Math.min(guess - now, blind) : blind);
  }
  // Overdue (every estimate passed): back off, doubling from when the job was last seen to move
  // (its last progress change, or the end its history promised), so a slightly early estimate
  // costs one more call, but at most a tenth of the time elapsed and 15 s apart, so a stalled job
  // is still seen within a tenth of its duration and 15 s.
  const since = Math.max(...known);
  return bounded(Math.min(schedule.backoffCeilingMs, schedule.overdueFraction * elapsed, now - since));
}
