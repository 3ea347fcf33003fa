// observe -> decide -> act for one StaticExportRelease, on the shared skeleton. Effects only;
// decisions live in decide.ts (its rules in rules/), the share group's protocol in share-visit.ts.
import type { AdminApiClient, ExportStatus, StartedExport } from '../../api/index.ts';
import {
  assertVersion,
  type BundleCache,
  type BundleLimits,
  bundleSource,
  type GateVerdict,
} from '../../bundle/index.ts';
import {
  GROUP_VERSION,
  SER_PLURAL,
  type StaticExportRelease,
  staticExportReleaseSpecSchema,
} from '../../crd/index.ts';
import { type Target, targetFor } from '../../targets/target.ts';
import { findWorkloads, type LabelledWorkloads, rollWorkload } from '../../targets/workloads.ts';
import { readCredentials, secretRefText } from '../credentials.ts';
import {
  classifyError,
  type Failure,
  failure,
  mayHaveReachedServer,
  TARGET_RECHECK_MS,
} from '../failures.ts';
import { type Loaded, Reconciler, type ReconcilerDeps, type Run as SkeletonRun } from '../skeleton.ts';
import type { ReconcileResult } from '../types.ts';
import { afterOciGateFailed, afterOciPublish, afterOciRewrite } from './after-oci.ts';
import { afterPublish, afterPublishGateFailed } from './after-publish.ts';
import { afterStart, afterStartFailed } from './after-start.ts';
import { withFailure, withHealthy } from './conditions.ts';
import { decide } from './decide.ts';
import {
  type Action,
  DEFAULT_TUNABLES,
  type Decision,
  type ExportPoll,
  type Observed,
  type OciAction,
  type OciCheck,
  observedOf,
  type PlatformObserved,
  type RegistryObserved,
  type Status,
  type Tunables,
} from './model.ts';
import { ociCheckDue, ociReference, ociSource, withinInterval } from './oci.ts';
import { type OpenedRegistry, openRegistry, pullSite, resolveTag } from './oci-source.ts';
import { judgeNewContent } from './publish-gate.ts';
import { afterRoll, type Roll } from './rollout.ts';
import { exportPollDelayMs } from './schedule.ts';
import { ShareVisit } from './share-visit.ts';
import { type SharedExports, shareKey } from './shared-exports.ts';

export interface ReleaseMetrics {
  exportFinished(seconds: number, result: 'completed' | 'failed'): void;
  linkExpiry(namespace: string, name: string, expiresAt: Date | undefined): void;
}

export interface BundleDownloadSettings {
  limits?: Partial<BundleLimits>;
  /** Overall deadline of one bundle download: a stuck server never holds a worker for longer. */
  deadlineMs?: number;
}

export interface ReleaseReconcilerOptions extends ReconcilerDeps {
  /** Where bundles are downloaded, verified and kept (bounded), once per export job. */
  cache: BundleCache;
  /** The share groups: one export per site, key and options at a time. */
  shared: SharedExports;
  /** The overall download deadline (the caps are the cache's). */
  download?: BundleDownloadSettings;
  metrics?: ReleaseMetrics;
  tunables?: Tunables;
  /** The operator's cache of labelled workloads: a kind it holds none of for a Secret is not listed. */
  labelledWorkloads?: LabelledWorkloads;
  /** Registry client settings for spec.source.oci (tests: short timeouts). */
  registry?: { timeoutMs?: number };
  /**
   * The releases of a domain from the operator's cache (an index: no scan of every release);
   * undefined while the cache is still loading. Without it no other release's status is looked at.
   */
  releasesOfDomain?: (domain: string) => readonly StaticExportRelease[] | undefined;
}

/** What the reconciler observes besides `decide`'s input: what this reconcile opened. */
interface Extras {
  /** The release's part in its share group: a platform release with usable credentials. */
  visit?: ShareVisit;
  /** The poll in `poll` was a call of this reconcile (not another member's answer). */
  polled?: boolean;
  /** Registry source: the client of this reconcile (closed when it ends). */
  registry?: OpenedRegistry;
}
type ReleaseObserved = Observed & Extras;

const releaseKey = (r: StaticExportRelease) => `${r.metadata.namespace}/${r.metadata.name}`;

/** The job in status still to be polled (not finished, not completed and waiting to publish). */
function jobToPoll(r: StaticExportRelease): { jobId: string; startedAt?: string } | undefined {
  const exp = r.status?.export;
  if (!exp?.jobId || exp.finishedAt || exp.state === 'completed') return undefined;
  return { jobId: exp.jobId, ...(exp.startedAt ? { startedAt: exp.startedAt } : {}) };
}

export class StaticExportReleaseReconciler extends Reconciler<
  StaticExportRelease,
  Status,
  ReleaseObserved,
  Decision
> {
  private readonly o: ReleaseReconcilerOptions;
  private readonly tunables: Tunables;

  constructor(options: ReleaseReconcilerOptions) {
    super(options, {
      apiVersion: GROUP_VERSION,
      plural: SER_PLURAL,
      specSchema: staticExportReleaseSpecSchema,
      logKey: 'release',
    });
    this.o = options;
    this.tunables = options.tunables ?? DEFAULT_TUNABLES;
  }

  protected callsApi(release: StaticExportRelease): boolean {
    return !release.spec.suspend && !release.metadata.deletionTimestamp && !ociSource(release);
  }

  // Deleted: the values Secret goes with it (owner reference); only our own series remain.
  protected override gone(namespace: string, name: string): void {
    this.o.metrics?.linkExpiry(namespace, name, undefined);
    this.o.shared.leave(`${namespace}/${name}`);
  }

  // A member of a share group decides through its visit: it reads the group and claims a start.
  protected decide(o: ReleaseObserved): Decision {
    if (o.visit && o.source === 'platform') return o.visit.decide(o, o.polled ?? false, this.tunables);
    return decide(o, this.tunables);
  }

  protected override finished(o: ReleaseObserved): void {
    o.visit?.close();
    void o.registry?.client.close();
  }

  protected withFailure(status: Status, f: Failure, generation: number | undefined, now: Date): Status {
    return withFailure(status, f, generation, now);
  }

  protected override statusRecorded(release: StaticExportRelease, status: Status): void {
    const expires = status.current?.expiresAt;
    this.o.metrics?.linkExpiry(
      release.metadata.namespace ?? '',
      release.metadata.name ?? '',
      expires ? new Date(expires) : undefined,
    );
  }

  protected async observe(
    { now, obj: release, blocked, client }: Loaded<StaticExportRelease>,
    signal: AbortSignal | undefined,
  ): Promise<ReleaseObserved> {
    const seen = observedOf(release, now);
    const o = await this.observeSource(
      seen.source === 'platform' && client ? { ...seen, client } : seen,
      blocked,
      signal,
    );
    // Deleted, suspended, blocked or following a registry: in no share group.
    if (!o.visit) this.o.shared.leave(releaseKey(release));
    return o;
  }

  private async observeSource(
    seen: Observed,
    blocked: Failure | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ReleaseObserved> {
    if (blocked) return { ...seen, blocked };
    const { release } = seen;
    if (seen.source === 'registry') {
      if (release.spec.suspend || release.metadata.deletionTimestamp) return seen;
      return (await this.misconfigured(seen, signal)) ?? this.observeRegistry(seen, signal);
    }
    const { client } = seen;
    if (!client) return seen;
    return (await this.misconfigured(seen, signal)) ?? this.observePlatform(seen, client, signal);
  }

  /**
   * A HelmRelease or Application that does not read what the operator writes is the user's to fix
   * first: nothing is exported (or pulled) for a target that cannot serve it.
   */
  private async misconfigured(
    seen: Observed,
    signal: AbortSignal | undefined,
  ): Promise<Observed | undefined> {
    const problem = await this.target(seen.release).problem(signal);
    return problem
      ? { ...seen, blocked: failure('TargetMisconfigured', problem, true, TARGET_RECHECK_MS) }
      : undefined;
  }

  /** Platform source: the job in flight (polled once for the group), else the group's peers, the target and workloads. */
  private async observePlatform(
    seen: PlatformObserved,
    client: AdminApiClient,
    signal: AbortSignal | undefined,
  ): Promise<ReleaseObserved> {
    const { release, now } = seen;
    const { identity } = client;
    // A member from here on: a job adopted below is its group's flight.
    const visit = new ShareVisit(
      this.o.shared,
      releaseKey(release),
      identity,
      shareKey(identity, release.spec),
    );
    const own = jobToPoll(release);
    if (own) {
      const { jobId } = own;
      // After a restart the group learns its export in flight from the releases' status.
      visit.adopt(jobId, own.startedAt ?? now.toISOString());
      // Another member's answer still fresh, or one call for all.
      const poll = await this.pollJob(
        release,
        () => visit.poll(jobId, () => client.getExport(jobId, { signal })),
        signal,
      );
      if (poll.kind !== 'job') return { ...seen, visit, poll };
      const answer = poll.job;
      return {
        ...seen,
        visit,
        polled: answer.polled,
        poll: answer.kind === 'job' ? exportPoll(answer.job) : { kind: 'notFound' },
      };
    }
    const peers = await this.adoptPeerJob(release, visit, now);
    const served = release.status?.current?.version;
    if (served === undefined) return { ...seen, visit, ...peers, targetDrifted: false };
    const [version, found] = await Promise.all([
      this.target(release).version(signal),
      this.findServing(release, signal),
    ]);
    return {
      ...seen,
      visit,
      ...peers,
      targetDrifted: version !== served,
      workloads: found.workloads,
      ...(found.missing.length ? { missingWorkloads: found.missing } : {}),
    };
  }

  /** Registry source: the tag's digest when a check is due, and the target and workloads as for the platform. */
  private async observeRegistry(
    seen: RegistryObserved,
    signal: AbortSignal | undefined,
  ): Promise<ReleaseObserved> {
    const { release, now } = seen;
    let registry: OpenedRegistry | undefined;
    let check: OciCheck | undefined;
    if (ociCheckDue(release, now)) {
      const opened = await openRegistry(this.o.kube, seen, {
        ...this.o.registry,
        ...(this.o.reads ? { secrets: this.o.reads.secrets } : {}),
      });
      if ('failure' in opened) return { ...seen, blocked: opened.failure };
      registry = opened;
      try {
        check = { kind: 'resolved', digest: await resolveTag(opened, seen.oci.tag ?? 'latest') };
      } catch (e) {
        void opened.client.close();
        if (signal?.aborted) throw e;
        return { ...seen, check: { kind: 'failed', failure: classifyError(e, secretRefText(release)) } };
      }
    }
    const base = { ...seen, ...(registry ? { registry } : {}), ...(check ? { check } : {}) };
    const current = release.status?.current;
    if (current?.version === undefined) return { ...base, targetDrifted: false };
    try {
      const [version, found] = await Promise.all([
        this.target(release).version(signal),
        this.findServing(release, signal),
      ]);
      return {
        ...base,
        // The values carry the content version; the reference is the image's.
        targetDrifted: version !== current.contentVersion,
        workloads: found.workloads,
        ...(found.missing.length ? { missingWorkloads: found.missing } : {}),
      };
    } catch (e) {
      void registry?.client.close();
      throw e;
    }
  }

  private findServing(release: StaticExportRelease, signal: AbortSignal | undefined) {
    return findWorkloads(
      this.o.kube,
      release.metadata.namespace ?? '',
      release.spec.target.valuesSecret?.name,
      release.spec.rollout.workloadRefs ?? [],
      signal,
      this.o.labelledWorkloads,
    );
  }

  /** Pulls, verifies and checks the image at the digest, then writes it to the target (or writes the served one again). */
  private async publishOci(o: ReleaseObserved, action: OciAction, run: Run): Promise<ReconcileResult> {
    const { signal } = run;
    const status = run.record.status;
    const release = { ...o.release, status };
    if (o.source !== 'registry') return {};
    const source = o.oci;
    if (action.kind === 'rewrite') {
      const current = status.current;
      const digest = current?.version?.slice(source.repository.length + 1) ?? '';
      await this.target(release).write(
        { bundleUrl: '', version: current?.contentVersion ?? '', ociReference: ociReference(source, digest) },
        o.now,
        signal,
      );
      await this.commit(run, afterOciRewrite({ ...o, release }));
      return { requeueAfterMs: 0 };
    }
    const registry = o.registry;
    if (!registry) return { requeueAfterMs: 0 };
    let pulled: Awaited<ReturnType<typeof pullSite>>;
    try {
      pulled = await pullSite(
        registry,
        action.digest,
        this.o.download?.limits ? { limits: this.o.download.limits } : {},
      );
    } catch (e) {
      if (signal?.aborted) throw e;
      return this.fail(run, status, withinInterval(release, classifyError(e, secretRefText(release))), e);
    }
    const reference = ociReference(source, action.digest);
    const verdict = judgeNewContent(release, reference, pulled.site);
    if (!verdict.ok) {
      const next = afterOciGateFailed(
        { ...o, release },
        { digest: action.digest, contentVersion: pulled.version, message: verdict.message },
      );
      await this.commit(run, next);
      return next.requeueAfterMs === undefined ? {} : { requeueAfterMs: next.requeueAfterMs };
    }
    const wrote = await this.target(release).write(
      { bundleUrl: '', version: pulled.version, ociReference: reference },
      o.now,
      signal,
    );
    await this.commit(
      run,
      afterOciPublish(
        { ...o, release },
        {
          digest: action.digest,
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
    const lookup = this.o.releasesOfDomain;
    const { domain } = release.spec;
    if (!lookup || domain === undefined || visit.flight()) return {};
    const peers = lookup(domain);
    if (!peers) return { peersUnknown: true };
    const me = releaseKey(release);
    const candidates: { peer: StaticExportRelease; job: { jobId: string; startedAt?: string } }[] = [];
    for (const p of peers) {
      const job = jobToPoll(p);
      if (!job || releaseKey(p) === me || p.metadata.deletionTimestamp) continue;
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
      const creds = await readCredentials(this.o.kube, peer, this.o.clients.defaults, this.o.reads?.secrets);
      if ('failure' in creds || this.o.clients.get(creds).identity !== visit.identity) continue;
      visit.adopt(job.jobId, job.startedAt ?? now.toISOString());
      return {};
    }
    return {};
  }

  protected override sendsOnce(action: Action): boolean {
    return action.kind === 'start';
  }

  // A finished job's state (and its ExportCompleted event) is stored with what the publish made of
  // it: a crash in between polls the job again, and publishing twice writes the same values.
  protected override writesWithOutcome(action: Action): boolean {
    return action.kind === 'publish';
  }

  protected async act(o: ReleaseObserved, d: Decision, run: Run): Promise<ReconcileResult> {
    const { action } = d;
    if (action.kind === 'roll') return this.roll(o, action, run);
    if (action.kind === 'pull' || action.kind === 'rewrite') return this.publishOci(o, action, run);
    // The platform's actions are a group member's: observe opened the visit along with the client.
    const { visit } = o;
    if (o.source !== 'platform' || !visit || !o.client) return {};
    const { client } = o;
    if (action.kind === 'start') return this.start(o, visit, client, run);
    if (action.kind === 'publish') return this.publish(o, visit, action, client, run);
    return {};
  }

  private async roll(o: ReleaseObserved, roll: Roll, run: Run): Promise<ReconcileResult> {
    const namespace = o.release.metadata.namespace ?? '';
    const rolled = [];
    for (const w of roll.workloads)
      rolled.push({ ...w, generation: await rollWorkload(this.o.kube, namespace, w, roll.annotations) });
    const status = run.record.status;
    const release = { ...o.release, status };
    const next = afterRoll(release, roll, rolled, o.now);
    // The rollout under way shows at once (Reconciling), not only at the next look.
    const rolling = withHealthy(release, { ...status, current: next.current }, o.now);
    await this.commit(run, { status: rolling, events: next.events });
    return { requeueAfterMs: 1_000 };
  }

  private async start(
    o: ReleaseObserved,
    visit: ShareVisit,
    client: AdminApiClient,
    run: Run,
  ): Promise<ReconcileResult> {
    const { spec } = o.release;
    // `status.start` is stored (by the skeleton, as a compare-and-swap) before this call: a crash or
    // a second operator from here on waits instead of starting a second export at once.
    let started: StartedExport;
    try {
      // Aborted (deleted, or another replica leads) even once sent: the mark stays, so a start cut
      // short is reported and waited out, never repeated at once.
      started = await client.startExport(
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
      visit.startFailed();
      const status = afterStartFailed(run.record.status, mayHaveReachedServer(e));
      return this.fail(run, status, classifyError(e, secretRefText(o.release)), e);
    }
    // First thing after the job exists: its id goes to status, so a restart resumes this job. Should
    // that write fail, the failure is recorded on top of it (the skeleton uses the status meant).
    // Started as the answer arrived: the platform counts its duration from about then (its
    // createdAt), so the site's previous durations point at the end, not a start call's time early.
    const startedAt = (this.o.now ?? (() => new Date()))();
    const next = afterStart(
      { ...o, now: startedAt, release: { ...o.release, status: run.record.status } },
      started.jobId,
      started.status ?? 'queued',
    );
    await this.commit(run, next);
    // Recorded: the group's other releases join this job (they are woken for it). A job whose id
    // could not be recorded is nobody's to join: its start's outcome counts as unknown.
    visit.started(started.jobId, startedAt.toISOString());
    // The first look: soon when nothing is known (a small site's export may be done at once), else
    // when this site's exports usually end.
    return { requeueAfterMs: exportPollDelayMs(next.status, startedAt) ?? 0 };
  }

  private async publish(
    o: ReleaseObserved,
    visit: ShareVisit,
    action: PublishAction,
    client: AdminApiClient,
    run: Run,
  ): Promise<ReconcileResult> {
    const { signal } = run;
    const status = run.record.status;
    const release = { ...o.release, status };
    // A link generated for another release of the group a moment ago serves this one too.
    const bundle = await visit.link(action.jobId, () => client.generateBundle(action.jobId, { signal }));
    let version = status.current?.version ?? '';
    let pageCount: number | undefined;
    let verdict: GateVerdict = { ok: true };
    if (action.mode === 'NewContent' || action.mode === 'Pin') {
      // Downloaded and verified once per job, whichever release asks first; the others read the result.
      const fetched = await this.o.cache.fetch(bundleSource(client.identity, action.jobId), {
        url: bundle.bundleUrl,
        ...(bundle.sizeBytes === undefined ? {} : { expectedSize: bundle.sizeBytes }),
        renewUrl: async () => (await client.generateBundle(action.jobId, { signal })).bundleUrl,
        ...(signal ? { signal } : {}),
        ...(this.o.download?.deadlineMs ? { deadlineMs: this.o.download.deadlineMs } : {}),
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
        this.tunables,
      );
      await this.commit(run, next);
      this.exportFinished(o, status);
      return next.requeueAfterMs === undefined ? {} : { requeueAfterMs: next.requeueAfterMs };
    }
    const unchanged = action.mode === 'NewContent' && version === status.current?.version;
    const wrote = unchanged
      ? false
      : await this.target(release).write({ bundleUrl: bundle.bundleUrl, version }, o.now, signal);
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
    await this.commit(run, next);
    if (action.mode === 'NewContent') this.exportFinished(o, status);
    // The workloads are looked at next, at once: a new version or renewal rolls them, and a spec
    // change (e.g. a new workloadRef) that re-exported identical content still brings them along.
    // That reconcile also schedules the renewal.
    return { requeueAfterMs: 0 };
  }

  private exportFinished(o: ReleaseObserved, status: Status): void {
    if (!status.export?.startedAt) return;
    this.o.metrics?.exportFinished(
      (o.now.getTime() - Date.parse(status.export.startedAt)) / 1000,
      'completed',
    );
  }

  private target(release: StaticExportRelease): Target {
    return targetFor({ kube: this.o.kube, release, secrets: this.o.reads?.secrets });
  }
}

type Run = SkeletonRun<StaticExportRelease, Status>;
type PublishAction = Extract<Action, { kind: 'publish' }>;

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
