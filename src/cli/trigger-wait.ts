// `trigger --wait`: after the receiver's 202, read the release until the export the call asked
// for is published or has failed, or --wait runs out.
import { formatDuration } from '../crd/duration.ts';
import type { StaticExportRelease } from '../crd/static-export-release.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import { wait } from '../timers.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { Reporter } from './output.ts';
import { getRelease } from './release-reader.ts';
import type { ReleaseRef } from './release-ref.ts';
import { triggerOutcome } from './trigger-outcome.ts';

/** Between reads of the release: one GET, as `flux reconcile` and `kubectl wait` poll. */
const WAIT_POLL_MS = 2000;

interface WaitSettings {
  kube: KubeClient;
  ref: ReleaseRef;
  /** The request the receiver recorded (its staticexport.dev/requested-at value). */
  requestedAt: string;
  timeoutMs: number;
  out: Reporter;
}

/** The version published for the request; throws exit 4 when it failed, 6 when --wait ran out. */
export async function waitForTriggeredExport(w: WaitSettings): Promise<string> {
  const key = `${w.ref.namespace}/${w.ref.name}`;
  const start = Date.now();
  let last = '';
  for (;;) {
    const outOfTime = Date.now() + WAIT_POLL_MS - start > w.timeoutMs;
    let release: StaticExportRelease;
    try {
      release = await getRelease(w.kube, w.ref);
    } catch (error) {
      // An export outlasts a blip of the API server (a restart, a 503): read again until --wait ends.
      if (outOfTime || !(error instanceof CliError) || error.exitCode !== EXIT.unavailable) throw error;
      w.out.progress({ key: 'api', text: `waiting for the Kubernetes API: ${error.message}` });
      await wait(WAIT_POLL_MS);
      continue;
    }
    const outcome = triggerOutcome(release, w.requestedAt, Date.now() - start);
    if (outcome.done && outcome.ok) return outcome.version;
    if (outcome.done)
      throw new CliError(
        EXIT.jobFailed,
        `the export requested for ${key} at ${w.requestedAt} failed: ${outcome.reason}: ${outcome.message}`,
      );
    last = outcome.waitingFor;
    w.out.progress({ key: last.replace(/ \(\d+%\)$/, ''), text: `waiting for ${last}` });
    if (outOfTime) break;
    await wait(WAIT_POLL_MS);
  }
  const ready = (await getRelease(w.kube, w.ref).catch(() => undefined))?.status?.conditions?.find(
    (c) => c.type === 'Ready',
  );
  const says = ready ? ` The release says Ready=${ready.status} ${ready.reason}: ${ready.message}` : '';
  throw new CliError(
    EXIT.unavailable,
    `the export requested for ${key} at ${w.requestedAt} was not published within ${formatDuration(w.timeoutMs)} (--wait): still waiting for ${last}.${says}`,
  );
}
