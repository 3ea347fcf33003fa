// What the StaticExportRelease reconciler is built with (release-setup.ts passes it), and what it lends its
// sources.
import type { BundleCache, BundleLimits } from '../../bundle/index.ts';
import type { StaticExportRelease } from '../../crd/index.ts';
import type { LabelledWorkloads } from '../../targets/workloads.ts';
import type { UrlPolicy } from '../../url-allow-list.ts';
import type { ReconcilerDeps } from '../reconciler-base.ts';
import type { StartBudgets } from './budget/start-budget.ts';
import type { Tunables } from './release-model.ts';
import type { SharedExports } from './share/shared-exports.ts';

interface ReleaseMetrics {
  exportFinished(seconds: number, result: 'completed' | 'failed'): void;
}

export interface BundleDownloadSettings {
  limits?: Partial<BundleLimits>;
  /** Overall deadline of one bundle download: a stuck server never holds a worker for longer. */
  deadlineMs?: number;
  /** --allow-private-bundle-links: the platform's links may lead to private addresses (src/bundle/link-destination.ts). */
  allowPrivateLinks?: boolean;
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
   * The releases of a site (its domain, or `project:<id>`, see siteKey) from the operator's cache
   * (an index: no scan of every release); undefined while the cache is still loading. Without it
   * no other release's status is looked at.
   */
  releasesOfSite?: (site: string) => readonly StaticExportRelease[] | undefined;
  /** The start budget groups of the current export API (10 starts per organization and hour). */
  budgets: StartBudgets;
  /** The repositories spec.gitWriteBack may push to (--allowed-git-urls); none without it. */
  gitUrls?: UrlPolicy;
  /** Resolves once the budgets count the starts the releases recorded before this term began. */
  budgetSeeded?: Promise<void>;
}
