import { completedDurationMs, observe, withDuration } from '../../../api/poll-schedule.ts';
import { none } from '../decision.ts';
import { recordedJob } from '../export-site.ts';
import type { Decision, ExportPoll, PlatformCase, Status } from '../model.ts';
import { exportObservations, exportPollDelayMs, nextExportDue } from '../schedule.ts';

type JobAnswer = Extract<ExportPoll, { kind: 'job' }>;

/**
 * The platform answered about the job in flight: its progress is recorded; completed, it is
 * published; failed, the next export waits for its interval or retry; else it is polled again.
 */
export function jobPolled({ o, status, tun }: PlatformCase, jobId: string, poll: JobAnswer): Decision {
  const { release, now } = o;
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
  if (poll.state === 'failed') {
    const message = `Export job ${jobId} failed${poll.error ? `: ${poll.error}` : ''}`;
    const s: Status = { ...status, export: { ...polled, finishedAt: now.toISOString(), message } };
    const due = nextExportDue({ ...release, status: s }, tun);
    return none(s, due === undefined ? undefined : due - now.getTime(), [
      { type: 'Warning', reason: 'ExportFailed', note: message },
    ]);
  }
  // queued, running, or a state this client does not know yet: keep polling.
  const s = { ...status, export: polled };
  return none(s, exportPollDelayMs(s, now));
}
