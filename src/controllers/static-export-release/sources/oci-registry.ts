// The registry source (spec.source.oci): the operator follows a tag. Observed: the tag's digest when
// a check is due (the registry client opened for it is the reconcile's), the target and the
// workloads. Its actions pull, verify and check the image at a digest and publish its reference, or
// write the served reference again. No admin API is called.
import type { StaticExportRelease } from '../../../crd/index.ts';
import { secretRefText } from '../../credentials.ts';
import { classifyError } from '../../failures.ts';
import type { Loaded } from '../../skeleton.ts';
import type { ReconcileResult } from '../../types.ts';
import { afterOciGateFailed, afterOciPublish, afterOciRewrite } from '../after-oci.ts';
import { decide } from '../decide.ts';
import type { Decision, OciCheck, OciSource, RegistryObserved } from '../model.ts';
import { ociCheckDue, ociReference, withinInterval } from '../oci.ts';
import { judgeNewContent } from '../publish-gate.ts';
import { memberKey } from '../shared-exports.ts';
import { observedOnly } from './observed-only.ts';
import {
  type OpenedRegistry,
  openRegistry,
  type PulledSite,
  pullSite,
  resolveTag,
} from './registry-client.ts';
import { serving, targetOf, targetProblem } from './serving.ts';
import type { ReleaseRun, Source, SourceContext, SourceLook } from './source.ts';

/** The registry source when spec.source.oci is set. */
export function ociRegistry(ctx: SourceContext, release: StaticExportRelease): Source | undefined {
  const oci = release.spec.source?.oci;
  return oci ? new OciRegistry(ctx, oci) : undefined;
}

class OciRegistry implements Source {
  readonly callsApi = false;
  private readonly ctx: SourceContext;
  private readonly oci: OciSource;

  constructor(ctx: SourceContext, oci: OciSource) {
    this.ctx = ctx;
    this.oci = oci;
  }

  async observe(loaded: Loaded<StaticExportRelease>, signal: AbortSignal | undefined): Promise<SourceLook> {
    const look = await this.look(loaded, signal);
    // Following a registry: in no share group (the release may have followed the platform before).
    this.ctx.options.shared.leave(memberKey(loaded.obj));
    return look;
  }

  private async look(
    { now, obj: release, blocked }: Loaded<StaticExportRelease>,
    signal: AbortSignal | undefined,
  ): Promise<SourceLook> {
    const { options, tunables } = this.ctx;
    const seen: RegistryObserved = { source: 'registry', oci: this.oci, now, release };
    if (blocked) return observedOnly({ ...seen, blocked }, tunables);
    if (release.spec.suspend || release.metadata.deletionTimestamp) return observedOnly(seen, tunables);
    const problem = await targetProblem(options, release, signal);
    if (problem) return observedOnly({ ...seen, blocked: problem }, tunables);
    let registry: OpenedRegistry | undefined;
    let check: OciCheck | undefined;
    if (ociCheckDue(release, now)) {
      const opened = await openRegistry(options.kube, seen, {
        ...options.registry,
        ...(options.reads ? { secrets: options.reads.secrets } : {}),
      });
      if ('failure' in opened) return observedOnly({ ...seen, blocked: opened.failure }, tunables);
      registry = opened;
      try {
        check = { kind: 'resolved', digest: await resolveTag(opened, this.oci.tag ?? 'latest', signal) };
      } catch (e) {
        void opened.client.close();
        if (signal?.aborted) throw e;
        const failed: OciCheck = { kind: 'failed', failure: classifyError(e, secretRefText(release)) };
        return observedOnly({ ...seen, check: failed }, tunables);
      }
    }
    try {
      // The values carry the content version; the reference is the image's.
      const observed = await serving(options, release, (current) => current.contentVersion, signal);
      return new RegistryLook(this.ctx, { ...seen, ...(check ? { check } : {}), ...observed }, registry);
    } catch (e) {
      void registry?.client.close();
      throw e;
    }
  }
}

/** A look at the registry: it pulls a digest through the client it opened, or rewrites the target. */
class RegistryLook implements SourceLook {
  readonly observed: RegistryObserved;
  private readonly ctx: SourceContext;
  /** The client of this reconcile, when the tag was checked (closed when it ends). */
  private readonly registry: OpenedRegistry | undefined;

  constructor(ctx: SourceContext, observed: RegistryObserved, registry: OpenedRegistry | undefined) {
    this.ctx = ctx;
    this.observed = observed;
    this.registry = registry;
  }

  decide(): Decision {
    return decide(this.observed, this.ctx.tunables);
  }

  act({ action }: Decision, run: ReleaseRun): Promise<ReconcileResult> {
    if (action.kind === 'rewrite') return this.rewrite(run);
    if (action.kind === 'pull') return this.pull(action.digest, run);
    return Promise.resolve({});
  }

  close(): void {
    void this.registry?.client.close();
  }

  /** The target lost the served reference: it is written again from status (no pull). */
  private async rewrite(run: ReleaseRun): Promise<ReconcileResult> {
    const o = this.observed;
    const status = run.record.status;
    const release = { ...o.release, status };
    const current = status.current;
    const digest = current?.version?.slice(o.oci.repository.length + 1) ?? '';
    await targetOf(this.ctx.options, release).write(
      { bundleUrl: '', version: current?.contentVersion ?? '', ociReference: ociReference(o.oci, digest) },
      o.now,
      run.signal,
    );
    await this.ctx.commit(run, afterOciRewrite({ ...o, release }));
    return { requeueAfterMs: 0 };
  }

  /** Pulls, verifies and checks the image at the digest, then writes it to the target. */
  private async pull(digest: string, run: ReleaseRun): Promise<ReconcileResult> {
    const o = this.observed;
    const { options } = this.ctx;
    const { signal } = run;
    const status = run.record.status;
    const release = { ...o.release, status };
    const { registry } = this;
    if (!registry) return { requeueAfterMs: 0 };
    let pulled: PulledSite;
    try {
      pulled = await pullSite(registry, digest, {
        ...(options.download?.limits ? { limits: options.download.limits } : {}),
        signal,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      return this.ctx.fail(run, status, withinInterval(release, classifyError(e, secretRefText(release))), e);
    }
    const reference = ociReference(o.oci, digest);
    const verdict = judgeNewContent(release, reference, pulled.site);
    if (!verdict.ok) {
      const next = afterOciGateFailed(
        { ...o, release },
        { digest, contentVersion: pulled.version, message: verdict.message },
      );
      await this.ctx.commit(run, next);
      return next.requeueAfterMs === undefined ? {} : { requeueAfterMs: next.requeueAfterMs };
    }
    const wrote = await targetOf(options, release).write(
      { bundleUrl: '', version: pulled.version, ociReference: reference },
      o.now,
      signal,
    );
    await this.ctx.commit(
      run,
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
}
