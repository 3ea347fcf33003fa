import { none } from '../decision.ts';
import type { Decision, PlatformCase, Status } from '../model.ts';
import { JOIN_WAIT_MS } from '../schedule.ts';
import { startOrWait } from './start-or-wait.ts';

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
