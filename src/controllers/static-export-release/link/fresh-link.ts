// Link renewal and target repair: the effect of renewLink and repairTarget (link-rules.ts) and the
// pure fold of its outcome. The served job's fresh link is read one byte before it replaces the one
// served (a dead one is never written), then written with the version served.

import type { GeneratedBundle } from '../../../api/index.ts';
import { recordedJobRef } from '../../../api/index.ts';
import { linkDestinationsFor, type ProbeOptions, probeLink } from '../../../bundle/index.ts';
import { type Failure, failure } from '../../failures.ts';
import type { ReconcileResult } from '../../types.ts';
import { recordedJob } from '../export/export-site.ts';
import { foldContent } from '../export/publish-content.ts';
import { meant, type Of, type ReleaseRun, type Step, settle } from '../release-effect.ts';
import type { Snapshot, Status, Tunables } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import { targetOf } from '../sources/serving.ts';
import type { PlatformLook } from '../sources/source.ts';
import { askLink, foldLink } from './job-link.ts';

/** What a renewal or repair came to once its link arrived: refused by the probe, or written. */
export type FreshLinkOutcome =
  | { kind: 'refused'; error: unknown }
  | { kind: 'written'; bundle: GeneratedBundle; wrote: boolean };

/** Renews (mode Renew) or restores (mode Repair) the served job's link in the target. */
export async function freshLink(
  options: ReleaseReconcilerOptions,
  tun: Tunables,
  look: PlatformLook,
  action: Of<'publish'>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o } = look;
  const { client } = o;
  const { signal } = run;
  const snapshot = { now: o.now, release: meant(o.release, run) };
  const got = foldLink(snapshot, action.jobId, await askLink(look, action, run), tun);
  if ('step' in got) return settle(run, got.step);
  // The link leads to a public address or the admin API's own host, unless opted out.
  const destinations = linkDestinationsFor(client.baseUrl, options.download?.allowPrivateLinks === true);
  const live = await liveLink(got.bundle, () => client.exportLink(recordedJobRef(action), { signal }), {
    destinations,
    ...(signal ? { signal } : {}),
  });
  if ('refused' in live)
    return settle(run, foldFreshLink(snapshot, action, { kind: 'refused', error: live.refused }));
  const { bundle } = live;
  const wrote = await targetOf(options, snapshot.release).write(
    { bundleUrl: bundle.bundleUrl, version: run.status.current?.version ?? '' },
    o.now,
    signal,
  );
  return settle(run, foldFreshLink(snapshot, action, { kind: 'written', bundle, wrote }));
}

/**
 * What a renewal or repair makes of the release (`release` as meant): a refused link is not written
 * (the served one stays, renewal is tried again soon); a written one is recorded as served (a
 * renewal with its time: it may roll the workloads) and the workloads are looked at next.
 */
export function foldFreshLink(snapshot: Snapshot, action: Of<'publish'>, outcome: FreshLinkOutcome): Step {
  const status = snapshot.release.status ?? {};
  if (outcome.kind === 'refused')
    return {
      kind: 'fail',
      status,
      failure: linkRefused(action.jobId, status, outcome.error),
      cause: outcome.error,
    };
  const { bundle } = outcome;
  return foldContent(snapshot, {
    kind: 'published',
    mode: action.mode,
    ...recordedJob(action),
    version: status.current?.version ?? '',
    expiresAt: bundle.expiresAt,
    wrote: outcome.wrote,
    ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
  });
}

/** A refused fresh link is asked for again this soon: the served one's lifetime runs meanwhile. */
const LINK_RETRY_MS = 60_000;

/**
 * The link if its first byte can be read; else, once, a fresh one straight from the platform (the
 * one handed out may be another release's, cached for the group) if that one can be read.
 */
async function liveLink(
  bundle: GeneratedBundle,
  fresh: () => Promise<GeneratedBundle>,
  probeOptions: ProbeOptions,
): Promise<{ bundle: GeneratedBundle } | { refused: unknown }> {
  const { signal } = probeOptions;
  const probe = async (b: GeneratedBundle) => {
    try {
      await probeLink(b.bundleUrl, probeOptions);
      return undefined;
    } catch (e) {
      if (signal?.aborted) throw e;
      return e;
    }
  };
  if ((await probe(bundle)) === undefined) return { bundle };
  const again = await fresh();
  const refused = await probe(again);
  return refused === undefined ? { bundle: again } : { refused };
}

/** A fresh link that failed its one-byte read: not written; the served one stays, and renewal is tried again soon. */
function linkRefused(jobId: string, status: Status, error: unknown): Failure {
  const expires = status.current?.expiresAt;
  return failure(
    'LinkRefused',
    `The fresh bundle link of export job ${jobId} failed a one-byte read before it was written (${error instanceof Error ? error.message : String(error)}), twice: it was not written${expires ? `, and the link written stays (it expires at ${expires})` : ''}. A fresh link is asked for again in a minute. If this lasts, the bundle host refuses the platform's links, or the operator cannot reach it (its egress to the bundle host)`,
    false,
    LINK_RETRY_MS,
  );
}
