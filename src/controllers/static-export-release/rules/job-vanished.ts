import { none, start } from '../decision.ts';
import type { Decision, PlatformCase, Status } from '../model.ts';
import { JOIN_WAIT_MS } from '../schedule.ts';

/**
 * The job in flight no longer exists on the platform: it ends as vanished, and the next export is
 * joined when another release of the group started one, else started.
 */
export function jobVanished({ o, status }: PlatformCase, jobId: string): Decision {
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
  return start(s, now, 'JobVanished', [
    {
      type: 'Warning',
      reason: 'ExportVanished',
      note: `Export job ${jobId} no longer exists; starting a new export`,
    },
  ]);
}
