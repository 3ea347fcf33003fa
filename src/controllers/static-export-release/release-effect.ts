// What every effect of a release shares: the run it is given (EffectRun: the status meant, commit,
// fail, sent, signal), and the Step a pure fold makes of its outcome, which `settle` then commits.
// Each feature keeps its effect and the fold of its outcome together (export/start-export.ts,
// export/publish-content.ts, link/fresh-link.ts, rollout/roll-workloads.ts, registry/pull-image.ts,
// write-back/push-version.ts); release-actions.ts is only their table.
import type { StaticExportRelease } from '../../crd/index.ts';
import { afterFailure, type Failure } from '../failures.ts';
import type { EffectRun } from '../reconciler-base.ts';
import type { ReconcileResult } from '../types.ts';
import type { Action, EventNote, Status } from './release-model.ts';

export type ReleaseRun = EffectRun<Status>;
export type Of<K extends Action['kind']> = Extract<Action, { kind: K }>;

/**
 * What a fold makes of an effect's outcome: a status to commit with the events that tell of it (and
 * when to look next), a failure to record on top of a status, or only a later look.
 */
export type Step =
  | {
      kind: 'commit';
      status: Status;
      events: EventNote[];
      requeueAfterMs?: number;
      /** A failure recorded in the status itself (not in Ready): the next look follows its retry rule. */
      retryAs?: Failure;
    }
  | { kind: 'fail'; status: Status; failure: Failure; cause: unknown }
  | { kind: 'wait'; requeueAfterMs: number };

/** Commits a step (or records its failure) and says when the release is looked at next. */
export async function settle(run: ReleaseRun, step: Step): Promise<ReconcileResult> {
  if (step.kind === 'wait') return { requeueAfterMs: step.requeueAfterMs };
  if (step.kind === 'fail') return run.fail(step.status, step.failure, step.cause);
  await run.commit({ status: step.status, events: step.events });
  if (step.retryAs) return afterFailure(step.retryAs);
  return step.requeueAfterMs === undefined ? {} : { requeueAfterMs: step.requeueAfterMs };
}

/** The release as this reconcile means it now: its status as decided or written so far. */
export const meant = (release: StaticExportRelease, run: ReleaseRun): StaticExportRelease => ({
  ...release,
  status: run.status,
});
