// Where a release's values go (spec.target): one file per kind implements Target, and targetFor
// (target-kinds.ts) picks the one the spec names. The reconciler only ever talks to a Target.
import type { StaticExportRelease } from '../crd/index.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import type { OwnedCache } from './owned.ts';
import type { StaticExportValues } from './values.ts';

export interface Target {
  /** What keeps the target from taking values (a HelmRelease that does not read them), if anything. */
  problem(signal?: AbortSignal): Promise<string | undefined>;
  /** The version the target holds now (undefined: absent, edited or not ours). */
  version(signal?: AbortSignal): Promise<string | undefined>;
  /** Writes the values; whether anything was written. */
  write(values: StaticExportValues, now: Date, signal?: AbortSignal): Promise<boolean>;
}

export interface TargetContext {
  kube: KubeClient;
  release: StaticExportRelease;
  /** The operator's cache of Secrets, where a target reads its own Secret from it. */
  secrets?: OwnedCache | undefined;
}
