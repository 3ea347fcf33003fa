// The platform source: the admin API exports the site (spec.domain or spec.projectId) as jobs. Observed: the job in
// flight (polled once for the share group), else the group's peers, the target and the workloads.
// The reconcile's ShareVisit, opened here along with the admin API client, is what every call on the
// share group goes through (the poll here; the start and the bundle link in start-export.ts and
// fresh-link.ts).
import type { AdminApiClient, ExportStatus } from '../../../api/index.ts';
import { type JobRecord, oneJobAtATimeOf, revisionOfSpec } from '../../../api/index.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../../../crd/index.ts';
import { readCredentials } from '../../credentials.ts';
import { type Loaded, pollJob } from '../../reconciler-base.ts';
import { BudgetVisit } from '../budget/budget-visit.ts';
import { budgetGroup, memberOf } from '../budget/recorded-starts.ts';
import { DEFAULT_TUNABLES, type ExportPoll, type PlatformObserved } from '../release-model.ts';
import { startDemandIntervalMs } from '../schedule.ts';
import { ShareVisit } from '../share/share-visit.ts';
import { memberKey, shareKey } from '../share/shared-exports.ts';
import { serving, targetProblem } from '../sources/serving.ts';
import type { Look, MemberObserved, PlatformLook, Source, SourceContext } from '../sources/source.ts';
import { exportTarget, recordedJob, siteKey } from './export-site.ts';

export const platformExport = (ctx: SourceContext): Source => new PlatformExport(ctx);

type RecordedJob = JobRecord & { jobId: string; startedAt?: string };

/** The job in status still to be polled (not finished, not completed and waiting to publish). */
function jobToPoll(r: StaticExportRelease): RecordedJob | undefined {
  const exp = r.status?.export;
  if (!exp?.jobId || exp.finishedAt || exp.state === 'completed') return undefined;
  return { ...recordedJob(exp), ...(exp.startedAt ? { startedAt: exp.startedAt } : {}) };
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
  ): Promise<Look> {
    const seen: PlatformObserved = { source: 'platform', now, release, ...(client ? { client } : {}) };
    if (blocked || !client) return this.outside(blocked ? { ...seen, blocked } : seen);
    const problem = await targetProblem(this.ctx.options, release, signal);
    if (problem) return this.outside({ ...seen, blocked: problem });
    return this.member({ ...seen, client }, signal);
  }

  /** Deleted, suspended or blocked: in no share group or start queue, and nothing to call. */
  private outside(o: PlatformObserved): Look {
    this.ctx.options.shared.leave(memberKey(o.release));
    this.ctx.options.budgets.leave(memberKey(o.release));
    return { source: 'idle', observed: o };
  }

  /** The job in flight (polled once for the group), else the group's peers, the target and workloads. */
  private async member(seen: MemberObserved, signal: AbortSignal | undefined): Promise<PlatformLook> {
    const { release, now, client } = seen;
    const { identity } = client;
    // A member from here on: a job adopted below is its group's flight.
    const oneJob = oneJobAtATimeOf(exportTarget(release.spec));
    const visit = new ShareVisit(
      this.ctx.options.shared,
      memberKey(release),
      identity,
      shareKey(identity, release.spec),
      oneJob === undefined ? undefined : `${identity}\u0000${oneJob}`,
    );
    const budget = await this.budgetOf(release, client, visit.key);
    const own = jobToPoll(release);
    if (own) {
      const { jobId } = own;
      // After a restart the group learns its export in flight from the releases' status.
      visit.adopt(jobId, own.startedAt ?? now.toISOString());
      const poll = await pollJob(release, () => visit.poll(client, own, signal), signal);
      if (poll.kind !== 'job') return { source: 'platform', observed: { ...seen, poll }, visit, ...budget };
      const answer = poll.job;
      return {
        source: 'platform',
        observed: { ...seen, poll: answer.kind === 'job' ? exportPoll(answer.job) : { kind: 'notFound' } },
        visit,
        polled: answer.polled,
        ...budget,
      };
    }
    const peers = await this.adoptPeerJob(release, visit, now);
    const observed = await serving(this.ctx.options, release, (current) => current.version, signal);
    return { source: 'platform', observed: { ...seen, ...peers, ...observed }, visit, ...budget };
  }

  /**
   * A release of the current export API counts its starts in its group's budget, seeded first with
   * the starts every release recorded before this operator started.
   */
  private async budgetOf(
    release: StaticExportRelease,
    client: AdminApiClient,
    share: string,
  ): Promise<{ budget?: BudgetVisit }> {
    const { budgets, budgetSeeded } = this.ctx.options;
    const { spec } = release;
    if (revisionOfSpec(spec).startLimit === undefined) {
      budgets.leave(memberKey(release));
      return {};
    }
    await budgetSeeded;
    const group = budgetGroup(spec.startBudget?.group, client.keyId);
    // A site whose exports fail asks at its retry delay, not its interval: that is its demand.
    const demand = startDemandIntervalMs(release, this.ctx.options.tunables ?? DEFAULT_TUNABLES);
    return { budget: new BudgetVisit(budgets, memberKey(release), group, memberOf(release, demand, share)) };
  }

  /**
   * After a restart the group knows its export in flight only once a release recording it was
   * reconciled; one that was not part of it (created meanwhile, or simply first in the queue) would
   * start a second export. So before anything can start, the group adopts the job in flight that
   * another release of the same site records, if that release is of the same group (options, and
   * account by its Secret's key digest). Looks only at the releases of this domain or project.
   */
  private async adoptPeerJob(
    release: StaticExportRelease,
    visit: ShareVisit,
    now: Date,
  ): Promise<{ peersUnknown?: true }> {
    const { kube, clients, reads, releasesOfSite: lookup } = this.ctx.options;
    const site = siteKey(release.spec);
    if (!lookup || site === undefined || visit.flight()) return {};
    const peers = lookup(site);
    if (!peers) return { peersUnknown: true };
    const me = memberKey(release);
    const candidates: { peer: StaticExportRelease; job: RecordedJob }[] = [];
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
