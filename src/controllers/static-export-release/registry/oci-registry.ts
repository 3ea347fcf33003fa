// The registry source (spec.source.oci): the operator follows a tag. Observed: the tag's digest when
// a check is due (the registry client opened for it is the reconcile's: a pull goes through it), the
// target and the workloads. No admin API is called.
import type { StaticExportRelease } from '../../../crd/index.ts';
import { secretRefText } from '../../credentials.ts';
import { classifyError } from '../../failures.ts';
import type { Loaded } from '../../reconciler-base.ts';
import type { OciCheck, OciSource, RegistryObserved } from '../release-model.ts';
import { memberKey } from '../share/shared-exports.ts';
import { serving, targetProblem } from '../sources/serving.ts';
import type { Look, Source, SourceContext } from '../sources/source.ts';
import { type OpenedRegistry, openRegistry, resolveTag } from './registry-client.ts';
import { ociCheckDue } from './registry-schedule.ts';

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

  async observe(loaded: Loaded<StaticExportRelease>, signal: AbortSignal | undefined): Promise<Look> {
    const look = await this.look(loaded, signal);
    // Following a registry: in no share group (the release may have followed the platform before).
    this.ctx.options.shared.leave(memberKey(loaded.obj));
    return look;
  }

  private async look(
    { now, obj: release, blocked }: Loaded<StaticExportRelease>,
    signal: AbortSignal | undefined,
  ): Promise<Look> {
    const { options } = this.ctx;
    const seen: RegistryObserved = { source: 'registry', oci: this.oci, now, release };
    if (blocked) return { source: 'idle', observed: { ...seen, blocked } };
    if (release.spec.suspend || release.metadata.deletionTimestamp) return { source: 'idle', observed: seen };
    const problem = await targetProblem(options, release, signal);
    if (problem) return { source: 'idle', observed: { ...seen, blocked: problem } };
    let registry: OpenedRegistry | undefined;
    let check: OciCheck | undefined;
    if (ociCheckDue(release, now)) {
      const opened = await openRegistry(options.kube, seen, {
        ...options.registry,
        ...(options.reads ? { secrets: options.reads.secrets } : {}),
      });
      if ('failure' in opened) return { source: 'idle', observed: { ...seen, blocked: opened.failure } };
      registry = opened;
      try {
        check = { kind: 'resolved', digest: await resolveTag(opened, this.oci.tag ?? 'latest', signal) };
      } catch (e) {
        void opened.client.close();
        if (signal?.aborted) throw e;
        const failed: OciCheck = { kind: 'failed', failure: classifyError(e, secretRefText(release)) };
        return { source: 'registry', observed: { ...seen, check: failed } };
      }
    }
    try {
      // The values carry the content version; the reference is the image's.
      const observed = await serving(options, release, (current) => current.contentVersion, signal);
      return {
        source: 'registry',
        observed: { ...seen, ...(check ? { check } : {}), ...observed },
        ...(registry ? { registry } : {}),
      };
    } catch (e) {
      void registry?.client.close();
      throw e;
    }
  }
}
