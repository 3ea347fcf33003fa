// Where a release's content comes from (spec.source): the platform's export jobs through the admin
// API, or a registry's tag. One file per kind implements Source and sourceFor picks the one the spec
// names, as targetFor does for targets: the reconciler names no source. A source observes what
// decide reads, performs its own actions and closes what it opened for the reconcile.
import type { StaticExportRelease } from '../../../crd/index.ts';
import type { Failure } from '../../failures.ts';
import type { Loaded, Run } from '../../skeleton.ts';
import type { ReconcileResult } from '../../types.ts';
import type { Decision, Folded, Observed, Status, Tunables } from '../model.ts';
import type { ReleaseReconcilerOptions } from '../options.ts';
import { ociRegistry } from './oci-registry.ts';
import { platformExport } from './platform-export.ts';

export type ReleaseRun = Run<StaticExportRelease, Status>;

export interface Source {
  /** Whether following it calls the admin API: the skeleton reads the release's key first. */
  readonly callsApi: boolean;
  /** This reconcile's look at the source; `loaded.client` is set when it calls the API with a usable key. */
  observe(loaded: Loaded<StaticExportRelease>, signal: AbortSignal | undefined): Promise<SourceLook>;
}

/** One reconcile's look at a release's source: what was observed, the decision on it, its actions. */
export interface SourceLook {
  readonly observed: Observed;
  /** `decide` on what was observed (pure; a platform release decides through its share group). */
  decide(): Decision;
  /** Performs the decided action when it is the source's own (start, publish; pull, rewrite). */
  act(d: Decision, run: ReleaseRun): Promise<ReconcileResult>;
  /** The reconcile ended, however: what observe opened (a share visit, a registry client) is closed. */
  close(): void;
}

/** What the reconciler lends a source: its options and the steps of the shared reconcile. */
export interface SourceContext {
  options: ReleaseReconcilerOptions;
  tunables: Tunables;
  /** Writes a status, then its events. */
  commit(run: ReleaseRun, step: Folded): Promise<void>;
  /** Records a failed action on top of `status` and says when to try again. */
  fail(run: ReleaseRun, status: Status, f: Failure, cause: unknown): Promise<ReconcileResult>;
}

/** The registry spec.source names; without one, the platform's exports of spec.domain. */
export function sourceFor(ctx: SourceContext, release: StaticExportRelease): Source {
  return ociRegistry(ctx, release) ?? platformExport(ctx);
}
