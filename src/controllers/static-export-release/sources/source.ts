// Where a release's content comes from (spec.source): the platform's export jobs through the admin
// API, or a registry's tag. One file per kind implements Source and sourceFor picks the one the spec
// names, as targetFor does for targets: the reconciler names no source. A source only observes; the
// actions (actions.ts) call through what its look opened.
import type { StaticExportRelease } from '../../../crd/index.ts';
import type { Loaded } from '../../reconciler-base.ts';
import type { BudgetVisit } from '../budget/start-budget.ts';
import { platformExport } from '../export/platform-export.ts';
import { ociRegistry } from '../registry/oci-registry.ts';
import type { OpenedRegistry } from '../registry/registry-client.ts';
import type { Observed } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import type { ShareVisit } from '../share/share-visit.ts';

export interface Source {
  /** Whether following it calls the admin API: the skeleton reads the release's key first. */
  readonly callsApi: boolean;
  /** This reconcile's look at the source; `loaded.client` is set when it calls the API with a usable key. */
  observe(loaded: Loaded<StaticExportRelease>, signal: AbortSignal | undefined): Promise<Look>;
}

/** One reconcile's look at a release's source: what decide reads, and what the actions call through. */
export interface Look {
  readonly observed: Observed;
  /** A platform release with an account: its part in its share group, through which its calls go. */
  readonly visit?: ShareVisit;
  /** The poll in `observed` was a call of this reconcile (not another member's answer). */
  readonly polled?: boolean;
  /** A release of the current export API: its part in its start budget group. */
  readonly budget?: BudgetVisit;
  /** The registry client opened to check the tag. */
  readonly registry?: OpenedRegistry;
}

/** What the reconciler lends a source. */
export interface SourceContext {
  options: ReleaseReconcilerOptions;
}

/** The registry spec.source names; without one, the platform's exports of spec.domain or spec.projectId. */
export function sourceFor(ctx: SourceContext, release: StaticExportRelease): Source {
  return ociRegistry(ctx, release) ?? platformExport(ctx);
}

/** The reconcile ended, however: what its look opened (a share visit, a registry client) is closed. */
export function closeLook(look: Look): void {
  look.visit?.close();
  void look.registry?.client.close();
}
