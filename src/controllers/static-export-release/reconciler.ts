// observe -> decide -> act for one StaticExportRelease, on the shared skeleton. The release's source
// (sources/) observes, decides through decide.ts (its rules in rules/) and performs its own actions;
// the reconciler names no source and does only what both share: the workloads' roll and the metrics.
import {
  GROUP_VERSION,
  SER_PLURAL,
  type StaticExportRelease,
  staticExportReleaseSpecSchema,
} from '../../crd/index.ts';
import { rollWorkload } from '../../targets/workloads.ts';
import type { Failure } from '../failures.ts';
import { type Loaded, Reconciler } from '../skeleton.ts';
import type { ReconcileResult } from '../types.ts';
import { withFailure, withHealthy } from './conditions.ts';
import { type Action, DEFAULT_TUNABLES, type Decision, type Observed, type Status } from './model.ts';
import type { ReleaseReconcilerOptions } from './options.ts';
import { afterRoll, type Roll } from './rollout.ts';
import { type ReleaseRun, type SourceContext, type SourceLook, sourceFor } from './sources/source.ts';

export class StaticExportReleaseReconciler extends Reconciler<
  StaticExportRelease,
  Status,
  SourceLook,
  Decision
> {
  private readonly o: ReleaseReconcilerOptions;
  private readonly sources: SourceContext;

  constructor(options: ReleaseReconcilerOptions) {
    super(options, {
      apiVersion: GROUP_VERSION,
      plural: SER_PLURAL,
      specSchema: staticExportReleaseSpecSchema,
      logKey: 'release',
    });
    this.o = options;
    this.sources = {
      options,
      tunables: options.tunables ?? DEFAULT_TUNABLES,
      commit: (run, step) => this.commit(run, step),
      fail: (run, status, f, cause) => this.fail(run, status, f, cause),
    };
  }

  protected callsApi(release: StaticExportRelease): boolean {
    return (
      !release.spec.suspend &&
      !release.metadata.deletionTimestamp &&
      sourceFor(this.sources, release).callsApi
    );
  }

  // Deleted: the values Secret goes with it (owner reference); only our own series remain.
  protected override gone(namespace: string, name: string): void {
    this.o.shared.leave(`${namespace}/${name}`);
  }

  protected observe(
    loaded: Loaded<StaticExportRelease>,
    signal: AbortSignal | undefined,
  ): Promise<SourceLook> {
    return sourceFor(this.sources, loaded.obj).observe(loaded, signal);
  }

  protected decide(look: SourceLook): Decision {
    return look.decide();
  }

  protected override finished(look: SourceLook): void {
    look.close();
  }

  protected withFailure(status: Status, f: Failure, generation: number | undefined, now: Date): Status {
    return withFailure(status, f, generation, now);
  }

  protected override sendsOnce(action: Action): boolean {
    return action.kind === 'start';
  }

  // A finished job's state (and its ExportCompleted event) is stored with what the publish made of
  // it: a crash in between polls the job again, and publishing twice writes the same values.
  protected override writesWithOutcome(action: Action): boolean {
    return action.kind === 'publish';
  }

  protected act(look: SourceLook, d: Decision, run: ReleaseRun): Promise<ReconcileResult> {
    if (d.action.kind === 'roll') return this.roll(look.observed, d.action, run);
    return look.act(d, run);
  }

  private async roll(o: Observed, roll: Roll, run: ReleaseRun): Promise<ReconcileResult> {
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
}
