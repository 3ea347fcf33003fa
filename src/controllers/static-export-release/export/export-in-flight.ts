// The exportInFlight rung and the two answers of its poll that take more than a line: the job's
// state (jobPolled) and the job gone (jobVanished).
import { completedDurationMs, observe, withDuration } from '../../../api/poll-schedule.ts';
import { formatDuration } from '../../../crd/index.ts';
import { type Rule, rule } from '../../rule-ladder.ts';
import { failed, none } from '../release-decisions.ts';
import type { Decision, EventNote, ExportPoll, PlatformCase, Status } from '../release-model.ts';
import {
  exportDeadline,
  exportObservations,
  exportPollDelayMs,
  inFlight,
  JOIN_WAIT_MS,
  nextExportDue,
  TIMED_OUT,
} from '../schedule.ts';
import { recordedJob } from './export-site.ts';
import { startOrWait } from './join-or-start.ts';

/**
 * An export in flight finishes first, whatever else changed meanwhile: a completed one is
 * published (its publish was cut short), else its poll's answer decides.
 */
export const exportInFlight: Rule<PlatformCase, Decision> = rule('exportInFlight', (c) => {
  const { o, status } = c;
  if (!inFlight(status)) return undefined;
  const jobId = status.export?.jobId ?? '';
  if (status.export?.state === 'completed')
    return {
      action: { kind: 'publish', mode: 'NewContent', ...recordedJob({ ...status.export, jobId }) },
      status,
      events: [],
    };
  const { poll } = o;
  if (!poll) return none(status, exportPollDelayMs(status, o.now));
  if (poll.kind === 'failed') return failed(status, poll.failure);
  if (poll.kind === 'notFound') return jobVanished(c, jobId);
  return jobPolled(c, jobId, poll);
});

type JobAnswer = Extract<ExportPoll, { kind: 'job' }>;

/**
 * The platform answered about the job in flight: its progress is recorded; completed, it is
 * published; failed, or still not done at its deadline (exportDeadline), the next export waits for
 * its interval or retry; else it is polled again.
 */
export function jobPolled(c: PlatformCase, jobId: string, poll: JobAnswer): Decision {
  const { o, status, tun } = c;
  const { now } = o;
  const seen = observe(exportObservations(status, now), poll, now.getTime());
  const polled = {
    ...status.export,
    state: poll.state,
    ...(poll.progress === undefined ? {} : { progress: poll.progress }),
    ...(poll.pageCount === undefined ? {} : { pageCount: poll.pageCount }),
    ...(seen.samples?.length
      ? {
          progressSamples: seen.samples.map((p) => ({
            at: new Date(p.at).toISOString(),
            progress: p.progress,
          })),
        }
      : {}),
  };
  if (poll.state === 'completed') {
    const took = completedDurationMs(poll, seen.startedAt, now.getTime());
    const s = {
      ...status,
      export: { ...polled, progress: 100 },
      exportDurationsSeconds: withDuration(status.exportDurationsSeconds, Math.round(took) / 1000),
    };
    return {
      action: { kind: 'publish', mode: 'NewContent', ...recordedJob({ ...status.export, jobId }) },
      status: s,
      events: [
        {
          type: 'Normal',
          reason: 'ExportCompleted',
          note: `Export job ${jobId} completed${poll.pageCount ? ` (${poll.pageCount} pages)` : ''}`,
        },
      ],
    };
  }
  if (poll.state === 'failed')
    return ended(c, polled, 'failed', `Export job ${jobId} failed${poll.error ? `: ${poll.error}` : ''}`);
  // queued, running, or a state this client does not know yet: polled again, until its deadline.
  const deadline = exportDeadline(status, tun) ?? Number.POSITIVE_INFINITY;
  if (now.getTime() >= deadline) {
    const allowed = formatDuration(deadline - Date.parse(status.export?.startedAt ?? ''));
    const message = `Export job ${jobId} did not finish within ${allowed} (the platform still reports it ${poll.state}): counted as failed`;
    return ended(c, polled, TIMED_OUT, message, 'ExportTimedOut');
  }
  const s = { ...status, export: polled };
  const next = Math.min(exportPollDelayMs(s, now) ?? Number.POSITIVE_INFINITY, deadline - now.getTime());
  return none(s, Number.isFinite(next) ? next : undefined);
}

/**
 * The export ended without content (the platform's `failed`, or its deadline passed): one more
 * export in a row without a publish; the next waits for its interval or its retry, which backs
 * off with each such export while nothing is served (the message says when).
 */
function ended(
  { o, status, tun }: PlatformCase,
  polled: NonNullable<Status['export']>,
  state: string,
  why: string,
  reason: EventNote['reason'] = 'ExportFailed',
): Decision {
  const { release, now } = o;
  const failures = (status.exportFailures ?? 0) + 1;
  const counted: Status = {
    ...status,
    export: { ...polled, state, finishedAt: now.toISOString() },
    exportFailures: failures,
  };
  const due = nextExportDue({ ...release, status: counted }, tun);
  const retry =
    status.current?.version || due === undefined
      ? ''
      : `; tried again at ${new Date(due).toISOString()} (${failures} in a row without a publish: each doubles the wait, up to an hour or spec.interval)`;
  const message = `${why}${retry}`;
  const s: Status = { ...counted, export: { ...counted.export, message } };
  return none(s, due === undefined ? undefined : due - now.getTime(), [
    { type: 'Warning', reason, note: message },
  ]);
}

/**
 * The job in flight no longer exists on the platform: it ends as vanished, and the next export is
 * joined when another release of the group started one, else started.
 */
export function jobVanished(c: PlatformCase, jobId: string): Decision {
  const { o, status } = c;
  const { now, shared } = o;
  const s: Status = {
    ...status,
    export: {
      ...status.export,
      state: 'vanished',
      finishedAt: now.toISOString(),
      message: 'The export job no longer exists',
    },
  };
  if (shared && shared.jobId !== jobId)
    return none(s, JOIN_WAIT_MS, [
      {
        type: 'Warning',
        reason: 'ExportVanished',
        note: `Export job ${jobId} no longer exists; joining the export started for the same site`,
      },
    ]);
  const d = startOrWait({ ...c, status: s }, 'JobVanished');
  const note = `Export job ${jobId} no longer exists; ${d.action.kind === 'start' ? 'starting a new export' : 'a new export starts when its start budget allows'}`;
  return { ...d, events: [{ type: 'Warning', reason: 'ExportVanished', note }, ...d.events] };
}
