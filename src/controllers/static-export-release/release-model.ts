// What a StaticExportRelease's decision reads and returns. `Observed` says which source the release
// follows (the platform's export jobs or a registry's tag), so each source's rules see only what is
// theirs; a rule is one rung of the ladder in decide-release.ts.
import { type AdminApiClient, type ExportRevisionName, HOUR_MS } from '../../api/index.ts';
import type { StaticExportRelease, StaticExportReleaseStatus } from '../../crd/index.ts';
import type { Workload, WorkloadRef } from '../../targets/workloads.ts';
import type { Decision as DecisionOf } from '../decision-shape.ts';
import type { Failure } from '../failures.ts';
import type { EventNote } from '../types.ts';
import type { BudgetView, StartAsk } from './budget/start-budget.ts';
import type { Roll } from './rollout/rollout.ts';
import type { SharedExport } from './share/shared-exports.ts';

export type Status = StaticExportReleaseStatus;
export type { EventNote };

/** spec.source.oci: the registry repository and tag a release follows. */
export type OciSource = NonNullable<NonNullable<StaticExportRelease['spec']['source']>['oci']>;

/** The release and the clock it was read at: all the after-action folds need. */
export interface Snapshot {
  now: Date;
  release: StaticExportRelease;
}

/** Result of polling the export job named in `status.export` (only when one is in flight). */
export type ExportPoll =
  | {
      kind: 'job';
      state: string;
      progress?: number;
      pageCount?: number;
      error?: string;
      /** The platform's own timestamps of the job (how long a completed one took). */
      createdAt?: string;
      updatedAt?: string;
    }
  | { kind: 'notFound' }
  | { kind: 'failed'; failure: Failure };

/** What resolving spec.source.oci.tag gave. */
export type OciCheck = { kind: 'resolved'; digest: string } | { kind: 'failed'; failure: Failure };

/** What either source observes. */
interface ObservedCommon extends Snapshot {
  /** A problem found before any API call (spec, Secret, key); nothing else is attempted. */
  blocked?: Failure;
  /** The target no longer holds the served version (deleted or edited by someone else). */
  targetDrifted?: boolean;
  /** The workloads serving the release (observed only while a version is served and no export runs). */
  workloads?: Workload[];
  /** spec.rollout.workloadRefs that do not exist. */
  missingWorkloads?: WorkloadRef[];
}

/** A release exported by the platform (spec.domain or spec.projectId, and an admin API key). */
export interface PlatformObserved extends ObservedCommon {
  source: 'platform';
  /**
   * The admin API client of the release's account, when its credentials are usable and it is neither
   * suspended nor being deleted; the actions call through it (decide never does).
   */
  client?: AdminApiClient;
  poll?: ExportPoll;
  /**
   * The export in flight for this release's share group (same account, domain and export options),
   * started by another release or by this one; absent when the group has none.
   */
  shared?: SharedExport;
  /**
   * The operator's cache does not hold every release yet (it is starting): another release of the
   * site may record an export in flight that `shared` cannot know of, so nothing is started yet.
   */
  peersUnknown?: boolean;
  /** A release of the current export API: its start budget group as it is at this moment. */
  budget?: BudgetView;
  /**
   * The export in flight of a release of the same project and account with another base path (one
   * active job per project): `release` names it (`namespace/name`).
   */
  sibling?: { release: string; jobId?: string; startedAt: string };
}

/** A release following a registry's tag (spec.source.oci). */
export interface RegistryObserved extends ObservedCommon {
  source: 'registry';
  oci: OciSource;
  /** What the tag resolved to (only when a check was due). */
  check?: OciCheck;
}

export type Observed = PlatformObserved | RegistryObserved;

export type StartReason = 'Initial' | 'SpecChanged' | 'Requested' | 'Interval' | 'Retry' | 'JobVanished';
/** NewContent: a finished export; Renew: a fresh link for the served job; Repair: Renew because the target drifted. */
export type PublishMode = 'NewContent' | 'Renew' | 'Repair' | 'Pin';

/** What either source does with what it serves: roll the workloads, commit the version to Git. */
type ServingAction =
  | Roll
  /** Commit the served version to spec.gitWriteBack's repository. */
  | { kind: 'writeBack' };

/** What a platform release does: start an export, publish a job's bundle (or only its fresh link). */
export type PlatformAction =
  | { kind: 'start'; reason: StartReason }
  | {
      kind: 'publish';
      mode: PublishMode;
      jobId: string;
      revision?: ExportRevisionName;
      projectId?: string;
      expectVersion?: string;
    }
  | ServingAction;

/**
 * What a release following a registry does. `pull`: fetch, verify and check the image at `digest`,
 * then publish it. `rewrite`: the target lost the served reference; write it again (no pull: it is
 * in status).
 */
export type RegistryAction = { kind: 'pull'; digest: string } | { kind: 'rewrite' } | ServingAction;

/** Every action: a new one belongs to a source's union above, and release-actions.ts then needs its effect. */
export type Action = { kind: 'none' } | PlatformAction | RegistryAction;

/**
 * A release's decision: with a start (action `start`) it reserves its share group's export and its
 * budget's slot; these say what else it claims of its start budget group, explicitly (the claim
 * step reads them, never the status or the events).
 */
export type Decision = DecisionOf<Action, Status> & {
  /** It waits for a start slot: its place in the group's queue. Absent: it leaves the queue. */
  queue?: StartAsk;
  /** It tells the group's overcommit (its StartBudgetOvercommitted event): not told again. */
  tellsOvercommit?: true;
};

/** A folded action outcome: the status to write and the events that tell of it. */
export interface Folded {
  status: Status;
  events: EventNote[];
}

export interface Tunables {
  /**
   * After a failed export with nothing served yet, try again after this long; each further export
   * in a row that ends without a publish doubles it (up to the site's interval or an hour).
   */
  exportRetryMs: number;
  /**
   * After a start whose answer was never recorded, wait this long before starting again: the
   * admin API has no idempotency key, so a job it may have started is left to finish first.
   */
  startOutcomeWaitMs: number;
  /** An export not finished after this long counts as failed, while no export duration of the site is recorded. */
  exportDeadlineMs: number;
  /** With durations recorded, the deadline is a multiple of their median, but never shorter than this. */
  exportDeadlineFloorMs: number;
  /** A 404 for the served job's link is asked again this much later before the job counts as purged. */
  jobGoneConfirmMs: number;
}

export const DEFAULT_TUNABLES: Tunables = {
  exportRetryMs: 5 * 60_000,
  startOutcomeWaitMs: 10 * 60_000,
  exportDeadlineMs: 2 * HOUR_MS,
  exportDeadlineFloorMs: 30 * 60_000,
  jobGoneConfirmMs: 60_000,
};

/**
 * What the platform's rules read: the observations, and the status as classified (a start mark
 * whose wait is over already dropped).
 */
export interface PlatformCase {
  o: PlatformObserved;
  status: Status;
  tun: Tunables;
}

/** What the registry's rules read: the observations, and the status with the tag's check recorded. */
export interface RegistryCase {
  o: RegistryObserved;
  status: Status;
}
