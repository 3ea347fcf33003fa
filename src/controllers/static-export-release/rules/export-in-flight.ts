import { failed, none } from '../decision.ts';
import { recordedJob } from '../export-site.ts';
import { type PlatformCase, type Rule, rule } from '../model.ts';
import { exportPollDelayMs, inFlight } from '../schedule.ts';
import { jobPolled } from './job-polled.ts';
import { jobVanished } from './job-vanished.ts';

/**
 * An export in flight finishes first, whatever else changed meanwhile: a completed one is
 * published (its publish was cut short), else its poll's answer decides.
 */
export const exportInFlight: Rule<PlatformCase> = rule('exportInFlight', (c) => {
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
