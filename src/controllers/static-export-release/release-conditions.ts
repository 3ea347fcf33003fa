// The conditions of a StaticExportRelease: Ready (the first of an ordered list of named checks that
// has something to say), Reconciling/Stalled per kstatus, Exporting, and GitWriteBack.
import { parseDuration, type StaticExportRelease } from '../../crd/index.ts';
import type { ConditionReason } from '../../crd/reasons.ts';
import {
  absent,
  type ConditionInput,
  type Progress,
  progressConditions,
  RECONCILING,
} from '../../runtime/conditions.ts';
import { withConditions } from '../documented-conditions.ts';
import { type Failure, failureConditions } from '../failures.ts';
import { specExportPending } from './export/start-reason.ts';
import type { Status } from './release-model.ts';
import { named, rolloutStalledMessage } from './rollout/rollout.ts';
import { inFlight, TIMED_OUT } from './schedule.ts';
import { gitWriteBackCondition } from './write-back/write-back.ts';

type Ready = Omit<ConditionInput<ConditionReason>, 'type'>;
/** One reading of Ready: what it says, or undefined when it has nothing to say. */
type ReadyCheck = (release: StaticExportRelease, s: Status) => Ready | undefined;

/** What is served meanwhile, for a message about content that was not published. */
const stillServing = (s: Status) =>
  s.current?.version ? `Still serving ${s.current.version}` : 'Nothing is served yet';

const exportFailed: ReadyCheck = (_, s) =>
  s.export?.state === 'failed' && s.export.finishedAt
    ? { status: 'False', reason: 'ExportFailed', message: s.export.message ?? 'The last export failed' }
    : undefined;

/** The last export passed its deadline without finishing (exportDeadline): it counts as failed. */
const exportTimedOut: ReadyCheck = (_, s) =>
  s.export?.state === TIMED_OUT && s.export.finishedAt
    ? {
        status: 'False',
        reason: 'ExportTimedOut',
        message: s.export.message ?? 'The last export did not finish within its deadline',
      }
    : undefined;

/** The image seen last under the tag failed the publish gate. */
const imageRefused: ReadyCheck = (_, s) => {
  const refused = s.oci?.rejected;
  if (!refused || refused.digest !== s.oci?.digest) return undefined;
  return {
    status: 'False',
    reason: 'PublishGateFailed',
    message: `Image ${refused.digest} was not published: ${refused.message}. ${stillServing(s)}; a new digest under the tag is checked at the next interval (spec.publishGate sets the checks)`,
  };
};

/** The last export finished but failed the publish gate. */
const exportRefused: ReadyCheck = (_, s) => {
  const e = s.export;
  if (!e?.finishedAt || !e.publishGateFailure) return undefined;
  return {
    status: 'False',
    reason: 'PublishGateFailed',
    message: `Export job ${e.jobId} was not published: ${e.publishGateFailure}. ${stillServing(s)}; the next export is tried at the next trigger or interval (spec.publishGate sets the checks)`,
  };
};

const rolloutStalled: ReadyCheck = (_, s) => {
  const rollout = s.current?.rollout;
  return rollout?.stalled
    ? { status: 'False', reason: 'RolloutStalled', message: rolloutStalledMessage(rollout) }
    : undefined;
};

const serving: ReadyCheck = (release, s) => {
  const c = s.current;
  if (!c?.version) return undefined;
  return {
    status: 'True',
    reason: 'Published',
    message: c.renewalTime
      ? `Serving ${c.version}; link renewal at ${c.renewalTime}${renewBeforeIgnored(release, c)}`
      : `Serving ${c.version}`,
  };
};

/** Ready's checks, first say first: a failure wins over a stalled rollout, which wins over serving. */
const READY_CHECKS: readonly ReadyCheck[] = [
  exportFailed,
  exportTimedOut,
  imageRefused,
  exportRefused,
  rolloutStalled,
  serving,
];

const waitingForFirstExport: Ready = {
  status: 'False',
  reason: 'Exporting',
  message: 'Waiting for the first export',
};

/** Ready for a status in which no call failed. */
export function readyCondition(release: StaticExportRelease, s: Status): ConditionInput<ConditionReason> {
  for (const check of READY_CHECKS) {
    const ready = check(release, s);
    if (ready) return { type: 'Ready', ...ready };
  }
  return { type: 'Ready', ...waitingForFirstExport };
}

/**
 * Says so when spec.renewBefore is not shorter than the link's lifetime: renewalTime then renews at
 * a third of the lifetime instead (renewing at once would renew in a loop).
 */
function renewBeforeIgnored(release: StaticExportRelease, c: NonNullable<Status['current']>): string {
  const requested = release.spec.renewBefore ? parseDuration(release.spec.renewBefore) : undefined;
  if (requested === undefined || !c.renewalTime || !c.expiresAt) return '';
  const before = Date.parse(c.expiresAt) - Date.parse(c.renewalTime);
  if (requested <= before) return '';
  const lifetime = Math.round((before * 3) / 1000);
  return ` (spec.renewBefore ${release.spec.renewBefore} is not shorter than the link's lifetime of ${lifetime} s: renewing a third of the lifetime ahead instead)`;
}

function exportingCondition(s: Status): ConditionInput<ConditionReason> {
  const e = s.export;
  if (e?.jobId && !e.finishedAt) {
    const progress = e.progress === undefined ? '' : `, ${Math.round(e.progress)}%`;
    const pages = e.pageCount === undefined ? '' : `, ${e.pageCount} pages`;
    return {
      type: 'Exporting',
      status: 'True',
      reason: 'Exporting',
      message: `Export job ${e.jobId} is ${e.state ?? 'queued'}${progress}${pages}`,
    };
  }
  return { type: 'Exporting', status: 'False', reason: 'Idle', message: 'No export in progress' };
}

/** What is under way (kstatus: Reconciling=True): an export in flight or waiting to start, or a rollout not yet done. */
function reconcilingOf(s: Status): Progress<ConditionReason> | undefined {
  if (inFlight(s)) return { reason: 'Exporting', message: exportingCondition(s).message };
  if (s.waiting) return { reason: s.waiting.reason, message: s.waiting.message };
  const r = s.current?.rollout;
  if (r && !r.completedAt && !r.stalled) {
    const names = r.workloads.map(named).join(', ');
    return r.via === 'Sync'
      ? { reason: 'Syncing', message: `Syncing ${r.version} to the pods of ${names}` }
      : { reason: 'RollingOut', message: `Rolling out ${r.version} to ${names}` };
  }
  return undefined;
}

/**
 * The conditions of a status about to be written (at commit, for every write but one whose outcome
 * is pending), from it and the failure it records. Being deleted: untouched (nothing more is
 * written). Suspended: nothing is under way any more.
 */
export function releaseConditions(
  release: StaticExportRelease,
  status: Status,
  f: Failure | undefined,
  now: Date,
): Status {
  const generation = release.metadata.generation;
  if (release.metadata.deletionTimestamp) return status;
  if (release.spec.suspend) return withConditions(status, [absent(RECONCILING)], generation, now);
  if (f) return withFailure(release, status, f, now);
  return withHealthy(release, status, now);
}

/** Ready/Stalled for a failure; the served version (if any) stays in `current`. The spec was seen. */
function withFailure(release: StaticExportRelease, status: Status, f: Failure, now: Date): Status {
  const generation = release.metadata.generation;
  return withConditions(
    generation === undefined ? status : { ...status, observedGeneration: generation },
    [
      ...failureConditions(f, reconcilingOf(status)),
      exportingCondition(status),
      gitWriteBackCondition(release, status),
    ],
    generation,
    now,
  );
}

/**
 * Conditions when no call failed: Ready follows what is served and how the last export ended;
 * Reconciling while an export or rollout is under way, Stalled while a rollout is stalled. The
 * generation counts as observed unless its spec change still waits for its export (kstatus then
 * says InProgress, not Current, in between).
 */
function withHealthy(release: StaticExportRelease, status: Status, now: Date): Status {
  const generation = release.metadata.generation;
  const stalled = status.current?.rollout?.stalled ? status.current.rollout : undefined;
  const observed =
    generation === undefined || specExportPending(release, status)
      ? status
      : { ...status, observedGeneration: generation };
  return withConditions(
    observed,
    [
      readyCondition(release, status),
      ...progressConditions({
        ...(stalled
          ? { stalled: { reason: 'RolloutStalled', message: rolloutStalledMessage(stalled) } }
          : {}),
        reconciling: reconcilingOf(status),
      }),
      exportingCondition(status),
      gitWriteBackCondition(release, status),
    ],
    generation,
    now,
  );
}
