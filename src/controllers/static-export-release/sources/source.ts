// Where a release's content comes from (spec.source): the platform's export jobs through the admin
// API, or a registry's tag. A Source only observes, and its Look says which source it looked at:
// the actions of each source take that source's look (release-actions.ts), so what they call
// through is there by type. The implementations are picked in source-for.ts.
import type { AdminApiClient } from '../../../api/index.ts';
import type { StaticExportRelease } from '../../../crd/index.ts';
import type { Loaded } from '../../reconciler-base.ts';
import type { BudgetVisit } from '../budget/budget-visit.ts';
import type { OpenedRegistry } from '../registry/registry-client.ts';
import type { Observed, PlatformObserved, RegistryObserved } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import type { ShareVisit } from '../share/share-visit.ts';

export interface Source {
  /** Whether following it calls the admin API: the skeleton reads the release's key first. */
  readonly callsApi: boolean;
  /** This reconcile's look at the source; `loaded.client` is set when it calls the API with a usable key. */
  observe(loaded: Loaded<StaticExportRelease>, signal: AbortSignal | undefined): Promise<Look>;
}

/** What a member of a share group observes: the client is its account's. */
export type MemberObserved = PlatformObserved & { client: AdminApiClient };

/** A platform release in its share group: its account's client, and the visit its calls go through. */
export interface PlatformLook {
  readonly source: 'platform';
  readonly observed: MemberObserved;
  readonly visit: ShareVisit;
  /** The poll in `observed` was a call of this reconcile (not another member's answer). */
  readonly polled?: boolean;
  /** A release of the current export API: its part in its start budget group. */
  readonly budget?: BudgetVisit;
}

/** A release following a registry's tag, neither blocked, suspended nor being deleted. */
export interface RegistryLook {
  readonly source: 'registry';
  readonly observed: RegistryObserved;
  /** The registry client opened to check the tag (a check was due): a pull goes through it. */
  readonly registry?: OpenedRegistry;
}

/** A release with nothing to call: blocked, suspended or being deleted (either source). */
export interface IdleLook {
  readonly source: 'idle';
  readonly observed: Observed;
}

/** One reconcile's look at a release's source: what decide reads, and what the actions call through. */
export type Look = PlatformLook | RegistryLook | IdleLook;

/** What the reconciler lends a source. */
export interface SourceContext {
  options: ReleaseReconcilerOptions;
}

/** The reconcile ended, however: what its look opened (a share visit, a registry client) is closed. */
export function closeLook(look: Look): void {
  if (look.source === 'platform') look.visit.close();
  if (look.source === 'registry') void look.registry?.client.close();
}
