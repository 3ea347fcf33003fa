// Every action a StaticExportRelease's decision can name, each with its one entry: what it calls
// and how its outcome is folded back into status (after-*.ts). The skeleton runs the entry of the
// action decided, after writing the decided status (see ActionEntry for `atMostOnce` and
// `writesWithOutcome`); its conditions are derived as each status is written.
import {
  ExportBusyError,
  ExportStartLimitError,
  type GeneratedBundle,
  NotFoundError,
  RevisionUnavailableError,
  type StartedExport,
  startMayHaveCreatedJob,
} from '../../api/index.ts';
import {
  assertVersion,
  bundleSource,
  type GateVerdict,
  linkArrivedExpired,
  linkDestinationsFor,
  type ProbeOptions,
  probeLink,
} from '../../bundle/index.ts';
import type { StaticExportRelease } from '../../crd/index.ts';
import { readGitCredentials, readSigningKey } from '../../git/credentials.ts';
import { renderCommitMessage } from '../../git/message.ts';
import { isSshUrl } from '../../git/ssh-url.ts';
import { gitUrlAllowed } from '../../git/url-policy.ts';
import { rollWorkload } from '../../targets/workloads.ts';
import { secretRefText } from '../credentials.ts';
import { afterFailure, classifyError, type Failure, failure, failureEvent } from '../failures.ts';
import type { ActionTable, Run } from '../reconciler-base.ts';
import type { ReconcileResult } from '../types.ts';
import {
  afterPublish,
  afterPublishGateFailed,
  afterServedJobGone,
  afterServedJobMissing,
  afterStart,
  afterStartBusy,
  afterStartFailed,
  afterStartRefused,
  pinnedJobGone,
  servedJobConfirmIn,
  servesAlready,
} from './export/after-export.ts';
import { exportTarget, jobRef, recordedJob, siteName } from './export/export-site.ts';
import { judgeNewContent } from './export/publish-gate.ts';
import { afterOciGateFailed, afterOciPublish, afterOciRewrite } from './registry/after-oci.ts';
import { type PulledSite, pullSite } from './registry/registry-client.ts';
import { ociReference, withinInterval } from './registry/registry-schedule.ts';
import type { Action, Status, Tunables } from './release-model.ts';
import type { ReleaseReconcilerOptions } from './release-options.ts';
import { afterRoll } from './rollout/rollout.ts';
import { exportPollDelayMs, medianExportMs, untilRenewalOr } from './schedule.ts';
import { targetOf } from './sources/serving.ts';
import type { Look } from './sources/source.ts';
import { afterWriteBack, withWriteBackFailure, writeBackFailure } from './write-back/write-back.ts';

export type ReleaseRun = Run<StaticExportRelease, Status>;
type Of<K extends Action['kind']> = Extract<Action, { kind: K }>;
export type ReleaseActions = ActionTable<Look, Action, StaticExportRelease, Status>;

export function releaseActions(options: ReleaseReconcilerOptions, tun: Tunables): ReleaseActions {
  return {
    start: { run: (look, _, run) => start(options, look, run), atMostOnce: true },
    // A finished job's state (and its ExportCompleted event) is stored with what the publish made of
    // it: a crash in between polls the job again, and publishing twice writes the same values.
    publish: {
      run: (look, action, run) => publish(options, tun, look, action, run),
      writesWithOutcome: true,
    },
    pull: { run: (look, action, run) => pull(options, look, action.digest, run) },
    rewrite: { run: (look, _, run) => rewrite(options, look, run) },
    roll: { run: (look, action, run) => roll(options, look, action, run) },
    writeBack: { run: (look, _, run) => writeBack(options, look, run) },
  };
}

/** The release as this reconcile means it now: its status as decided or written so far. */
const meant = (look: Look, run: ReleaseRun): StaticExportRelease => ({
  ...look.observed.release,
  status: run.record.status,
});

/** Starts the export the share group claimed for this release and records its job. */
async function start(
  options: ReleaseReconcilerOptions,
  look: Look,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o, visit } = look;
  if (o.source !== 'platform' || !o.client || !visit) return {};
  const { spec } = o.release;
  // `status.start` is stored (by the skeleton, as a compare-and-swap) before this call: a crash or
  // a second operator from here on waits instead of starting a second export at once.
  let started: StartedExport;
  try {
    // Aborted (deleted, or another replica leads) even once sent: the mark stays, so a start cut
    // short is reported and waited out, never repeated at once (and its slot stays spent).
    started = await o.client.startExport(exportTarget(spec), run.signal ? { signal: run.signal } : {});
  } catch (e) {
    if (run.signal?.aborted) {
      run.sent();
      throw e;
    }
    return startRefused(look, run, e);
  }
  run.sent();
  // First thing after the job exists: its id goes to status, so a restart resumes this job. Should
  // that write fail, the failure is recorded on top of it (the skeleton uses the status meant).
  // Started as the answer arrived: the platform counts its duration from about then (its
  // createdAt), so the site's previous durations point at the end, not a start call's time early.
  const startedAt = (options.now ?? (() => new Date()))();
  const next = afterStart(
    { now: startedAt, release: meant(look, run) },
    started.jobId,
    started.status ?? 'queued',
  );
  await run.commit(next);
  // Recorded: the group's other releases join this job (they are woken for it). A job whose id
  // could not be recorded is nobody's to join: its start's outcome counts as unknown.
  visit.started(started.jobId, startedAt.toISOString());
  // The first look: soon when nothing is known (a small site's export may be done at once), else
  // when this site's exports usually end.
  return { requeueAfterMs: exportPollDelayMs(next.status, startedAt) ?? 0 };
}

/**
 * Whether a failed start's request may count against the organization's hour: a 409 or 429 (the
 * vendor does not say they do not: assumed they may), or an answer that can follow the job's
 * creation. Anything else (sent or not: a refusal of the request itself, 400, 401, 403, 404, the
 * per-minute limit) started nothing: its slot is given back.
 */
const mayCount = (e: unknown) =>
  e instanceof ExportBusyError || e instanceof ExportStartLimitError || startMayHaveCreatedJob(e);

/**
 * The start call failed. A 409 (a job of the deployment is active: the dashboard's, another
 * cluster's, or ours whose answer was lost) is waited out by every release of the project, then
 * started once more; a 429 blocks the start budget group until the platform allows starts again.
 * Both keep their slot and their place in status.recentStarts, as does an answer that may follow
 * the job's creation (its mark stays: StartOutcomeUnknown). Any other failure started nothing: the
 * mark goes, and the start is no longer recorded.
 */
async function startRefused(look: Look, run: ReleaseRun, e: unknown): Promise<ReconcileResult> {
  const { observed: o, visit, budget } = look;
  if (mayCount(e)) run.sent();
  const snapshot = { now: o.now, release: meant(look, run) };
  if (e instanceof ExportBusyError) {
    visit?.close();
    const waitMs = busyWaitMs(run.record.status);
    budget?.busy(o.now.getTime() + waitMs);
    await run.commit(afterStartBusy(snapshot, waitMs));
    return { requeueAfterMs: untilRenewalOr(run.record.status, waitMs, o.now) };
  }
  if (e instanceof ExportStartLimitError && budget) {
    visit?.close();
    const until = budget.refused(e.retryAfterMs);
    await run.commit(afterStartRefused(snapshot, until));
    return { requeueAfterMs: untilRenewalOr(run.record.status, until - o.now.getTime(), o.now) };
  }
  const mayHaveStarted = startMayHaveCreatedJob(e);
  visit?.startFailed();
  return run.fail(
    afterStartFailed(run.record.status, mayHaveStarted),
    classifyError(e, secretRefText(o.release)),
    e,
  );
}

function linkExpiredOnArrival(jobId: string, expiresAt: Date, now: Date): Failure {
  return {
    reason: 'BundleInvalid',
    message: `The platform handed out a bundle link for export job ${jobId} that expires at ${expiresAt.toISOString()}, already expired or within two seconds when it arrived (${now.toISOString()}): nothing was written, and a fresh link is asked for in 5 minutes. If this repeats, check this node's clock (NTP)`,
    stalled: false,
    retryAfterMs: 5 * 60_000,
  };
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

/**
 * At most this many start requests per hour meet a job of the project already active (409): each
 * may count against the organization's hour, so a 409 is waited out at least an hour's share.
 */
const BUSY_PROBES_PER_HOUR = 3;

/**
 * How long a 409 is waited out: as long as this site's exports usually take, and at least
 * 60 / BUSY_PROBES_PER_HOUR minutes.
 */
export function busyWaitMs(status: Status): number {
  return Math.max(3_600_000 / BUSY_PROBES_PER_HOUR, medianExportMs(status) ?? 0);
}

/** Publishes a job's bundle: new content (downloaded, verified, gated), a pin, a renewal or a repair. */
async function publish(
  options: ReleaseReconcilerOptions,
  tun: Tunables,
  look: Look,
  action: Of<'publish'>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o, visit } = look;
  if (o.source !== 'platform' || !o.client || !visit) return {};
  const { client } = o;
  const { signal } = run;
  const status = run.record.status;
  const release = meant(look, run);
  // A link generated for another release of the group a moment ago serves this one too (or the
  // one the poll that saw the job complete carried, in the current export API).
  const job = jobRef(action);
  let bundle: GeneratedBundle;
  try {
    bundle = await visit.link(action.jobId, () => client.exportLink(job, { signal }));
  } catch (e) {
    // No such endpoint is not a purged job: the revision's own reason says to move the release.
    const purged = e instanceof NotFoundError && !(e instanceof RevisionUnavailableError);
    if (!purged || action.mode === 'NewContent' || signal?.aborted) throw e;
    return servedJobGone(look, action, run, e, tun);
  }
  // A link that arrives expired would be written, fail every download and be renewed in a loop:
  // refused, and asked for again later.
  if (linkArrivedExpired(bundle.expiresAt, o.now))
    return run.fail(status, linkExpiredOnArrival(action.jobId, bundle.expiresAt, o.now), bundle.expiresAt);
  // A renewed or repaired link is tried before it replaces the one served (new content's link was
  // just downloaded from): a dead one is never written.
  // The link leads to a public address or the admin API's own host, unless opted out.
  const destinations = linkDestinationsFor(client.baseUrl, options.download?.allowPrivateLinks === true);
  if (action.mode === 'Renew' || action.mode === 'Repair') {
    const live = await liveLink(bundle, () => client.exportLink(job, { signal }), {
      destinations,
      ...(signal ? { signal } : {}),
    });
    if ('refused' in live)
      return run.fail(status, linkRefused(action.jobId, status, live.refused), live.refused);
    bundle = live.bundle;
  }
  let version = status.current?.version ?? '';
  let pageCount: number | undefined;
  let verdict: GateVerdict = { ok: true };
  if (action.mode === 'NewContent' || action.mode === 'Pin') {
    // Downloaded and verified once per job, whichever release asks first; the others read the result.
    const fetched = await options.cache.fetch(bundleSource(client.identity, action.jobId), {
      url: bundle.bundleUrl,
      ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
      renewUrl: async () => (await client.exportLink(job, { signal })).bundleUrl,
      ...(signal ? { signal } : {}),
      ...(options.download?.deadlineMs ? { deadlineMs: options.download.deadlineMs } : {}),
      destinations,
    });
    assertVersion(fetched.version, action.expectVersion);
    version = fetched.version;
    pageCount = fetched.site.pages;
    // Only new content is judged: a pinned version was served before.
    if (action.mode === 'NewContent') verdict = judgeNewContent(release, version, fetched.site);
  }
  const exportFinished = () => {
    if (!status.export?.startedAt) return;
    options.metrics?.exportFinished(
      (o.now.getTime() - Date.parse(status.export.startedAt)) / 1000,
      'completed',
    );
  };
  if (!verdict.ok) {
    const next = afterPublishGateFailed(
      { now: o.now, release },
      { jobId: action.jobId, version, message: verdict.message },
      tun,
    );
    await run.commit(next);
    exportFinished();
    return next.requeueAfterMs === undefined ? {} : { requeueAfterMs: next.requeueAfterMs };
  }
  const unchanged = action.mode === 'NewContent' && servesAlready(status, version);
  const wrote = unchanged
    ? false
    : await targetOf(options, release).write({ bundleUrl: bundle.bundleUrl, version }, o.now, signal);
  const next = afterPublish(
    { now: o.now, release },
    {
      mode: action.mode,
      ...recordedJob(action),
      version,
      expiresAt: bundle.expiresAt,
      wrote,
      ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
      ...(pageCount === undefined ? {} : { pageCount }),
    },
  );
  await run.commit(next);
  if (action.mode === 'NewContent') exportFinished();
  // The workloads are looked at next, at once: a new version or renewal rolls them, and a spec
  // change (e.g. a new workloadRef) that re-exported identical content still brings them along.
  // That reconcile also schedules the renewal.
  return { requeueAfterMs: 0 };
}

/**
 * The job of the served or pinned version answered 404. Confirmed once more a while later (see
 * afterServedJobMissing), it is gone (purged): unpinned, the release exports anew; pinned, only
 * the user can choose another version, and the pods keep what they have.
 */
async function servedJobGone(
  look: Look,
  action: Of<'publish'>,
  run: ReleaseRun,
  notFound: NotFoundError,
  tun: Tunables,
): Promise<ReconcileResult> {
  const release = meant(look, run);
  const { now } = look.observed;
  // The served job's 404 is asked once more (a pin of another job from history is not served yet).
  const served = run.record.status.current?.jobId === action.jobId;
  const confirmIn = served ? servedJobConfirmIn(run.record.status, now, tun) : 0;
  if (confirmIn === undefined) {
    await run.commit(afterServedJobMissing({ now, release }));
    return { requeueAfterMs: tun.jobGoneConfirmMs };
  }
  if (confirmIn > 0) return { requeueAfterMs: confirmIn };
  const pinned = release.spec.pinnedVersion;
  if (pinned)
    return run.fail(run.record.status, pinnedJobGone(run.record.status, pinned, action.jobId), notFound);
  await run.commit(afterServedJobGone({ now, release }));
  return { requeueAfterMs: 0 };
}

/** Pulls, verifies and checks the image at the digest, then writes it to the target. */
async function pull(
  options: ReleaseReconcilerOptions,
  look: Look,
  digest: string,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o, registry } = look;
  if (o.source !== 'registry' || !registry) return { requeueAfterMs: 0 };
  const { signal } = run;
  const status = run.record.status;
  const release = meant(look, run);
  let pulled: PulledSite;
  try {
    pulled = await pullSite(registry, digest, {
      ...(options.download?.limits ? { limits: options.download.limits } : {}),
      signal,
    });
  } catch (e) {
    if (signal?.aborted) throw e;
    return run.fail(status, withinInterval(release, classifyError(e, secretRefText(release))), e);
  }
  const reference = ociReference(o.oci, digest);
  const verdict = judgeNewContent(release, reference, pulled.site);
  if (!verdict.ok) {
    const next = afterOciGateFailed(
      { ...o, release },
      { digest, contentVersion: pulled.version, message: verdict.message },
    );
    await run.commit(next);
    return next.requeueAfterMs === undefined ? {} : { requeueAfterMs: next.requeueAfterMs };
  }
  const wrote = await targetOf(options, release).write(
    { bundleUrl: '', version: pulled.version, ociReference: reference },
    o.now,
    signal,
  );
  await run.commit(
    afterOciPublish(
      { ...o, release },
      {
        digest,
        contentVersion: pulled.version,
        pageCount: pulled.site.pages,
        sizeBytes: pulled.sizeBytes,
        wrote,
        verified: pulled.verified,
      },
    ),
  );
  // The workloads roll next (a new reference), then the next check is scheduled.
  return { requeueAfterMs: 0 };
}

/** The target lost the served reference: it is written again from status (no pull). */
async function rewrite(
  options: ReleaseReconcilerOptions,
  look: Look,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o } = look;
  if (o.source !== 'registry') return {};
  const release = meant(look, run);
  const current = release.status?.current;
  const digest = current?.version?.slice(o.oci.repository.length + 1) ?? '';
  await targetOf(options, release).write(
    { bundleUrl: '', version: current?.contentVersion ?? '', ociReference: ociReference(o.oci, digest) },
    o.now,
    run.signal,
  );
  await run.commit(afterOciRewrite({ ...o, release }));
  return { requeueAfterMs: 0 };
}

/** Rolls the workloads that do not carry the served version's annotations. */
async function roll(
  options: ReleaseReconcilerOptions,
  look: Look,
  action: Of<'roll'>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { release, now } = look.observed;
  const namespace = release.metadata.namespace ?? '';
  const rolled = [];
  for (const w of action.workloads)
    rolled.push({ ...w, generation: await rollWorkload(options.kube, namespace, w, action.annotations) });
  const status = run.record.status;
  const next = afterRoll({ ...release, status }, action, rolled, now);
  // The rollout under way shows at once (Reconciling), not only at the next look.
  await run.commit({ status: { ...status, current: next.current }, events: next.events });
  return { requeueAfterMs: 1_000 };
}

/**
 * Commits the served version to spec.gitWriteBack's repository: the URL is checked against
 * --allowed-git-urls before its Secret is read, and nothing but the version is written.
 */
async function writeBack(
  options: ReleaseReconcilerOptions,
  look: Look,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { observed: o } = look;
  const release = meant(look, run);
  const g = release.spec.gitWriteBack;
  const status = run.record.status;
  const version = status.current?.version;
  if (!g || !version) return {};
  // Recorded in GitWriteBack, not Ready: the site serves the version all the same.
  const failed = async (f: Failure): Promise<ReconcileResult> => {
    options.logger.warn({ release: `${namespace}/${release.metadata.name}`, reason: f.reason }, f.message);
    const recorded = withWriteBackFailure(status, f, release.metadata.generation, o.now);
    await run.commit({ status: recorded, events: [failureEvent(f)] });
    return afterFailure(f);
  };
  const namespace = release.metadata.namespace ?? '';
  const allowed = gitUrlAllowed(g.url, options.gitUrls ?? { allowed: [], allowInsecure: false });
  if (!allowed.allowed) return failed(writeBackFailure(status, allowed.reason, allowed.message));
  const transport = isSshUrl(g.url) ? 'ssh' : 'https';
  const read = await readGitCredentials(
    options.kube,
    namespace,
    g.secretRef,
    options.reads?.secrets,
    transport,
  );
  if ('failure' in read)
    return failed(
      writeBackFailure(status, read.failure.reason, read.failure.message, read.failure.retryAfterMs),
    );
  const signing = g.signingKey
    ? await readSigningKey(options.kube, namespace, g.signingKey.secretRef, options.reads?.secrets)
    : undefined;
  if (signing && 'failure' in signing)
    return failed(
      writeBackFailure(status, signing.failure.reason, signing.failure.message, signing.failure.retryAfterMs),
    );
  const site = o.source === 'registry' ? o.oci.repository : siteName(release.spec);
  // Loaded on the first write-back: isomorphic-git and its inflater cost the operator about 4 MB of
  // memory, which every release without write-back would pay otherwise.
  const { writeVersion } = await import('../../git/write-version.ts');
  const outcome = await writeVersion({
    target: {
      url: g.url,
      path: g.path,
      field: g.field,
      ...(g.branch === undefined ? {} : { branch: g.branch }),
      ...(g.pushBranch === undefined ? {} : { pushBranch: g.pushBranch }),
    },
    credentials: read.credentials,
    version,
    author: g.author,
    message: renderCommitMessage(g.messageTemplate, {
      site,
      // history[0] is the version served now.
      oldVersion: status.history?.find((h) => h.version !== version)?.version,
      newVersion: version,
      release: `${namespace}/${release.metadata.name}`,
    }),
    allowInsecureHttp: options.gitUrls?.allowInsecure ?? false,
    ...(signing ? { signingKey: signing.key } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
  });
  if (outcome.outcome === 'Failed') return failed(writeBackFailure(status, outcome.reason, outcome.message));
  await run.commit(afterWriteBack({ now: o.now, release }, outcome));
  // The foot of the ladder is looked at again: the rollout under way is watched on.
  return { requeueAfterMs: 0 };
}
