// The platform source: the admin API exports the site (spec.domain) as jobs. Observed: the job in
// flight (polled once for the share group), else the group's peers, the target and the workloads.
// Its actions start an export and publish a job's bundle; every call on the share group goes through
// the reconcile's ShareVisit, opened here along with the admin API client.
import type { AdminApiClient, ExportStatus, StartedExport } from '../../../api/index.ts';
import { assertVersion, bundleSource, type GateVerdict } from '../../../bundle/index.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../../../crd/index.ts';
import { readCredentials, secretRefText } from '../../credentials.ts';
import { classifyError, mayHaveReachedServer } from '../../failures.ts';
import { type Loaded, pollJob } from '../../skeleton.ts';
import type { ReconcileResult } from '../../types.ts';
import { afterPublish, afterPublishGateFailed } from '../after-publish.ts';
import { afterStart, afterStartFailed } from '../after-start.ts';
import type { Action, Decision, ExportPoll, PlatformObserved, Status } from '../model.ts';
import { judgeNewContent } from '../publish-gate.ts';
import { exportPollDelayMs } from '../schedule.ts';
import { ShareVisit } from '../share-visit.ts';
import { memberKey, shareKey } from '../shared-exports.ts';
import { observedOnly } from './observed-only.ts';
import { serving, targetOf, targetProblem } from './serving.ts';
import type { ReleaseRun, Source, SourceContext, SourceLook } from './source.ts';

/** What a member of a share group observes: the client is its account's. */
type MemberObserved = PlatformObserved & { client: AdminApiClient };
type PublishAction = Extract<Action, { kind: 'publish' }>;

export const platformExport = (ctx: SourceContext): Source => new PlatformExport(ctx);

/** The job in status still to be polled (not finished, not completed and waiting to publish). */
function jobToPoll(r: StaticExportRelease): { jobId: string; startedAt?: string } | undefined {
  const exp = r.status?.export;
  if (!exp?.jobId || exp.finishedAt || exp.state === 'completed') return undefined;
  return { jobId: exp.jobId, ...(exp.startedAt ? { startedAt: exp.startedAt } : {}) };
}

/** A status answer as `decide` takes it. */
export function exportPoll(job: ExportStatus): ExportPoll {
  return {
    kind: 'job',
    state: job.status,
    ...(typeof job.progress === 'number' ? { progress: job.progress } : {}),
    ...(typeof job.pageCount === 'number' ? { pageCount: job.pageCount } : {}),
    ...(typeof job.error === 'string' ? { error: job.error } : {}),
    ...(job.createdAt ? { createdAt: job.createdAt } : {}),
    ...(job.updatedAt ? { updatedAt: job.updatedAt } : {}),
  };
}

class PlatformExport implements Source {
  readonly callsApi = true;
  private readonly ctx: SourceContext;

  constructor(ctx: SourceContext) {
    this.ctx = ctx;
  }

  async observe(
    { now, obj: release, blocked, client }: Loaded<StaticExportRelease>,
    signal: AbortSignal | undefined,
  ): Promise<SourceLook> {
    const seen: PlatformObserved = { source: 'platform', now, release, ...(client ? { client } : {}) };
    if (blocked || !client) return this.outside(blocked ? { ...seen, blocked } : seen);
    const problem = await targetProblem(this.ctx.options, release, signal);
    if (problem) return this.outside({ ...seen, blocked: problem });
    return this.member({ ...seen, client }, signal);
  }

  /** Deleted, suspended or blocked: in no share group, and nothing to call. */
  private outside(o: PlatformObserved): SourceLook {
    this.ctx.options.shared.leave(memberKey(o.release));
    return observedOnly(o, this.ctx.tunables);
  }

  /** The job in flight (polled once for the group), else the group's peers, the target and workloads. */
  private async member(seen: MemberObserved, signal: AbortSignal | undefined): Promise<SourceLook> {
    const { release, now, client } = seen;
    const { identity } = client;
    // A member from here on: a job adopted below is its group's flight.
    const visit = new ShareVisit(
      this.ctx.options.shared,
      memberKey(release),
      identity,
      shareKey(identity, release.spec),
    );
    const own = jobToPoll(release);
    if (own) {
      const { jobId } = own;
      // After a restart the group learns its export in flight from the releases' status.
      visit.adopt(jobId, own.startedAt ?? now.toISOString());
      // Another member's answer still fresh, or one call for all.
      const poll = await pollJob(
        release,
        () => visit.poll(jobId, () => client.getExport(jobId, { signal })),
        signal,
      );
      if (poll.kind !== 'job') return new MemberLook(this.ctx, { ...seen, poll }, visit, false);
      const answer = poll.job;
      return new MemberLook(
        this.ctx,
        { ...seen, poll: answer.kind === 'job' ? exportPoll(answer.job) : { kind: 'notFound' } },
        visit,
        answer.polled,
      );
    }
    const peers = await this.adoptPeerJob(release, visit, now);
    const observed = await serving(this.ctx.options, release, (current) => current.version, signal);
    return new MemberLook(this.ctx, { ...seen, ...peers, ...observed }, visit, false);
  }

  /**
   * After a restart the group knows its export in flight only once a release recording it was
   * reconciled; one that was not part of it (created meanwhile, or simply first in the queue) would
   * start a second export. So before anything can start, the group adopts the job in flight that
   * another release of the same domain records, if that release is of the same group (options, and
   * account by its Secret's key digest). Looks only at the releases of this domain.
   */
  private async adoptPeerJob(
    release: StaticExportRelease,
    visit: ShareVisit,
    now: Date,
  ): Promise<{ peersUnknown?: true }> {
    const { kube, clients, reads, releasesOfDomain: lookup } = this.ctx.options;
    const { domain } = release.spec;
    if (!lookup || domain === undefined || visit.flight()) return {};
    const peers = lookup(domain);
    if (!peers) return { peersUnknown: true };
    const me = memberKey(release);
    const candidates: { peer: StaticExportRelease; job: { jobId: string; startedAt?: string } }[] = [];
    for (const p of peers) {
      const job = jobToPoll(p);
      if (!job || memberKey(p) === me || p.metadata.deletionTimestamp) continue;
      // The cache holds them unparsed: defaults applied as for this release, a spec not valid skipped.
      const spec = staticExportReleaseSpecSchema.safeParse(p.spec);
      // A suspended release's status is frozen: its job may be long over.
      if (!spec.success || spec.data.suspend) continue;
      // Options first (no Secret read): the same key would give the same group only with them.
      if (shareKey(visit.identity, spec.data) !== visit.key) continue;
      candidates.push({ peer: { ...p, spec: spec.data }, job });
    }
    // The newest first: an older one recorded elsewhere is more likely over.
    candidates.sort((a, b) => (b.job.startedAt ?? '').localeCompare(a.job.startedAt ?? ''));
    for (const { peer, job } of candidates) {
      const creds = await readCredentials(kube, peer, clients.defaults, reads?.secrets);
      if ('failure' in creds || clients.get(creds).identity !== visit.identity) continue;
      visit.adopt(job.jobId, job.startedAt ?? now.toISOString());
      return {};
    }
    return {};
  }
}

/** A share group member's look: it decides through its visit, and starts or publishes an export. */
class MemberLook implements SourceLook {
  readonly observed: MemberObserved;
  private readonly ctx: SourceContext;
  private readonly visit: ShareVisit;
  /** The poll in `observed` was a call of this reconcile (not another member's answer). */
  private readonly polled: boolean;

  constructor(ctx: SourceContext, observed: MemberObserved, visit: ShareVisit, polled: boolean) {
    this.ctx = ctx;
    this.observed = observed;
    this.visit = visit;
    this.polled = polled;
  }

  decide(): Decision {
    return this.visit.decide(this.observed, this.polled, this.ctx.tunables);
  }

  act({ action }: Decision, run: ReleaseRun): Promise<ReconcileResult> {
    if (action.kind === 'start') return this.start(run);
    if (action.kind === 'publish') return this.publish(action, run);
    return Promise.resolve({});
  }

  close(): void {
    this.visit.close();
  }

  private async start(run: ReleaseRun): Promise<ReconcileResult> {
    const o = this.observed;
    const { spec } = o.release;
    // `status.start` is stored (by the skeleton, as a compare-and-swap) before this call: a crash or
    // a second operator from here on waits instead of starting a second export at once.
    let started: StartedExport;
    try {
      // Aborted (deleted, or another replica leads) even once sent: the mark stays, so a start cut
      // short is reported and waited out, never repeated at once.
      started = await o.client.startExport(
        {
          // The platform source: the CRD requires a domain with it.
          domain: spec.domain ?? '',
          ...(spec.export?.versionLabel ? { version: spec.export.versionLabel } : {}),
          ...(spec.export?.paths ? { paths: spec.export.paths } : {}),
        },
        run.signal ? { signal: run.signal } : {},
      );
    } catch (e) {
      if (run.signal?.aborted) throw e;
      this.visit.startFailed();
      const status = afterStartFailed(run.record.status, mayHaveReachedServer(e));
      return this.ctx.fail(run, status, classifyError(e, secretRefText(o.release)), e);
    }
    // First thing after the job exists: its id goes to status, so a restart resumes this job. Should
    // that write fail, the failure is recorded on top of it (the skeleton uses the status meant).
    // Started as the answer arrived: the platform counts its duration from about then (its
    // createdAt), so the site's previous durations point at the end, not a start call's time early.
    const startedAt = (this.ctx.options.now ?? (() => new Date()))();
    const next = afterStart(
      { ...o, now: startedAt, release: { ...o.release, status: run.record.status } },
      started.jobId,
      started.status ?? 'queued',
    );
    await this.ctx.commit(run, next);
    // Recorded: the group's other releases join this job (they are woken for it). A job whose id
    // could not be recorded is nobody's to join: its start's outcome counts as unknown.
    this.visit.started(started.jobId, startedAt.toISOString());
    // The first look: soon when nothing is known (a small site's export may be done at once), else
    // when this site's exports usually end.
    return { requeueAfterMs: exportPollDelayMs(next.status, startedAt) ?? 0 };
  }

  private async publish(action: PublishAction, run: ReleaseRun): Promise<ReconcileResult> {
    const o = this.observed;
    const { client } = o;
    const { options } = this.ctx;
    const { signal } = run;
    const status = run.record.status;
    const release = { ...o.release, status };
    // A link generated for another release of the group a moment ago serves this one too.
    const bundle = await this.visit.link(action.jobId, () => client.generateBundle(action.jobId, { signal }));
    let version = status.current?.version ?? '';
    let pageCount: number | undefined;
    let verdict: GateVerdict = { ok: true };
    if (action.mode === 'NewContent' || action.mode === 'Pin') {
      // Downloaded and verified once per job, whichever release asks first; the others read the result.
      const fetched = await options.cache.fetch(bundleSource(client.identity, action.jobId), {
        url: bundle.bundleUrl,
        ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
        renewUrl: async () => (await client.generateBundle(action.jobId, { signal })).bundleUrl,
        ...(signal ? { signal } : {}),
        ...(options.download?.deadlineMs ? { deadlineMs: options.download.deadlineMs } : {}),
      });
      assertVersion(fetched.version, action.expectVersion);
      version = fetched.version;
      pageCount = fetched.site.pages;
      // Only new content is judged: a pinned version was served before.
      if (action.mode === 'NewContent') verdict = judgeNewContent(release, version, fetched.site);
    }
    if (!verdict.ok) {
      const next = afterPublishGateFailed(
        { ...o, release },
        { jobId: action.jobId, version, message: verdict.message },
        this.ctx.tunables,
      );
      await this.ctx.commit(run, next);
      this.exportFinished(status);
      return next.requeueAfterMs === undefined ? {} : { requeueAfterMs: next.requeueAfterMs };
    }
    const unchanged = action.mode === 'NewContent' && version === status.current?.version;
    const wrote = unchanged
      ? false
      : await targetOf(options, release).write({ bundleUrl: bundle.bundleUrl, version }, o.now, signal);
    const next = afterPublish(
      { ...o, release },
      {
        mode: action.mode,
        jobId: action.jobId,
        version,
        expiresAt: bundle.expiresAt,
        wrote,
        ...(bundle.sizeBytes === undefined ? {} : { sizeBytes: bundle.sizeBytes }),
        ...(pageCount === undefined ? {} : { pageCount }),
      },
    );
    await this.ctx.commit(run, next);
    if (action.mode === 'NewContent') this.exportFinished(status);
    // The workloads are looked at next, at once: a new version or renewal rolls them, and a spec
    // change (e.g. a new workloadRef) that re-exported identical content still brings them along.
    // That reconcile also schedules the renewal.
    return { requeueAfterMs: 0 };
  }

  private exportFinished(status: Status): void {
    if (!status.export?.startedAt) return;
    this.ctx.options.metrics?.exportFinished(
      (this.observed.now.getTime() - Date.parse(status.export.startedAt)) / 1000,
      'completed',
    );
  }
}
