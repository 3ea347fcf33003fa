// What a StaticExportRelease needs next, as a pure function of what was observed: the status is
// classified once (a start or a wait that is over dropped, a job of the other API revision noted,
// a pin's spec seen; a tag's check recorded), then the first rule of its source's ladder that
// applies decides, else `settle` (the foot, at the end of this file: the workloads roll or are
// watched). The rules' order is the behaviour:
// test/unit/controllers/static-export-release/ladder.test.ts pins it.
import { recordedJobRef, revisionOfJob, revisionOfSpec } from '../../api/index.ts';
import type { Failure } from '../failures.ts';
import { type Chosen, ladder, type Rule } from '../rule-ladder.ts';
import { blocked, deleting, suspended } from './common-rules/common-rules.ts';
import { exportInFlight } from './export/export-in-flight.ts';
import { joinOrStart, overcommitEvent, withoutWaitOver } from './export/join-or-start.ts';
import { pinnedVersion } from './export/pinned-version.ts';
import { startOutcomeUnknown, withoutExpiredStart } from './export/start-outcome-unknown.ts';
import { requestsOf } from './export/start-reason.ts';
import { renewLink, repairTarget } from './link/link-rules.ts';
import { ociCheckFailed, ociNewDigest, ociRewrite } from './registry/registry-rules.ts';
import { untilNextCheck, withCheck } from './registry/registry-schedule.ts';
import { failed, none } from './release-decisions.ts';
import {
  DEFAULT_TUNABLES,
  type Decision,
  type Observed,
  type PlatformCase,
  type PlatformObserved,
  type RegistryCase,
  type RegistryObserved,
  type Status,
  type Tunables,
} from './release-model.ts';
import { syncStep } from './rollout/content-sync.ts';
import { rolloutStep } from './rollout/rollout.ts';
import { untilNextWork } from './schedule.ts';
import { writeBackDue } from './write-back/write-back.ts';

/**
 * Deleted or suspended, nothing more; a start in doubt is waited out before anything else; a
 * problem found before the calls, then an export in flight, come before a pin or a new export;
 * renewal and repair only once none is due.
 */
export const PLATFORM_RULES: readonly Rule<PlatformCase, Decision>[] = [
  deleting,
  suspended,
  startOutcomeUnknown,
  blocked,
  exportInFlight,
  pinnedVersion,
  joinOrStart,
  renewLink,
  repairTarget,
];

/** Deleted or suspended, nothing more; a new digest is pulled before a drifted target is written again. */
export const REGISTRY_RULES: readonly Rule<RegistryCase, Decision>[] = [
  deleting,
  suspended,
  blocked,
  ociCheckFailed,
  ociNewDigest,
  ociRewrite,
];

export function decide(o: Observed, tun: Tunables = DEFAULT_TUNABLES): Decision {
  return choose(o, tun).decision;
}

/** The decision and the rule that chose it. */
export function choose(o: Observed, tun: Tunables = DEFAULT_TUNABLES): Chosen<Decision> {
  return o.source === 'registry' ? chooseRegistry(o) : choosePlatform(o, tun);
}

function choosePlatform(o: PlatformObserved, tun: Tunables): Chosen<Decision> {
  const found = o.release.status ?? {};
  const status = withoutWaitOver(withoutExpiredStart(found, o.now, tun), o.now);
  const chosen = ladder(PLATFORM_RULES, pinSeen({ o, tun, status: revisionNoted(o, status) }), steady);
  // Told once per group, with whatever this release decided.
  const told = overcommitEvent(o.budget);
  if (told.length === 0) return chosen;
  return {
    ...chosen,
    decision: { ...chosen.decision, events: [...chosen.decision.events, ...told], tellsOvercommit: true },
  };
}

/**
 * A job in flight started through the other revision of the export API than the spec names now
 * (the release was moved from spec.domain to spec.projectId, or back): it finishes where it
 * started, and its record says so.
 */
function revisionNoted(o: PlatformObserved, status: Status): Status {
  const e = status.export;
  if (!e?.jobId || e.finishedAt) return status;
  const started = revisionOfJob(recordedJobRef(e));
  if (started === revisionOfSpec(o.release.spec)) return status;
  const message = `Started through the ${started.title} before the spec changed: it finishes there, and the next export uses the API the spec names now`;
  return e.message === message ? status : { ...status, export: { ...e, message } };
}

/** Nothing to export: the release settles until the next work due on its own. */
function steady({ o, status, tun }: PlatformCase): Decision {
  // A pinned release handles a request without exporting: its link is renewed as usual.
  const handled = o.release.spec.pinnedVersion ? { ...status, ...requestsOf(o.release) } : status;
  return settle(o, handled, untilNextWork(o.release, o.now, tun));
}

/**
 * A pinned release does not re-export on spec changes: its generation is seen, and what else is
 * due (renewal, the workloads of a changed spec.rollout) follows.
 */
function pinSeen(c: PlatformCase): PlatformCase {
  const { release } = c.o;
  const gen = release.metadata.generation;
  if (!release.spec.pinnedVersion || (c.status.observedGeneration ?? 0) === (gen ?? 0)) return c;
  return { ...c, status: { ...c.status, observedGeneration: gen } };
}

// The tag's check is recorded first (the spec and any request are seen with it).
function chooseRegistry(o: RegistryObserved): Chosen<Decision> {
  const found = o.release.status ?? {};
  const status = o.check?.kind === 'resolved' ? withCheck(found, o.release, o.check.digest, o.now) : found;
  return ladder(REGISTRY_RULES, { o, status }, (c) =>
    settle(o, c.status, untilNextCheck(c.status, o.oci, o.now)),
  );
}

/**
 * The foot of the ladder: nothing to fetch or publish. The workloads roll or are watched; else
 * nothing is done until `nextWorkMs`, the next work due on its own (link renewal, the next
 * interval or tag check).
 */
function settle(o: Observed, status: Status, nextWorkMs: number | undefined): Decision {
  const { release, now } = o;
  let steady = status;
  const step =
    release.spec.rollout.onNewContent === 'Sync'
      ? syncStep(release, o.workloads, now)
      : rolloutStep(release, o.workloads, now);
  if (step?.kind === 'roll') return { action: step, status: steady, events: [] };
  if (step && steady.current) steady = { ...steady, current: { ...steady.current, rollout: step.rollout } };
  // Once the workloads were told (the rollout is watched meanwhile), Git learns the version.
  if (writeBackDue(release, steady))
    return { action: { kind: 'writeBack' }, status: steady, events: step?.events ?? [] };
  const missing = o.missingWorkloads ?? [];
  if (missing.length) {
    const f: Failure = {
      reason: 'WorkloadNotFound',
      message: `spec.rollout.workloadRefs names ${missing.map((m) => `${m.kind}/${m.name}`).join(', ')}, not found in namespace ${release.metadata.namespace}: create it or remove the reference`,
      stalled: true,
      retryAfterMs: 60_000,
    };
    const d = failed(steady, f);
    return { ...d, events: [...(step?.events ?? []), ...d.events] };
  }
  const next = [nextWorkMs, step?.requeueAfterMs].filter((t): t is number => t !== undefined);
  return none(steady, next.length ? Math.min(...next) : undefined, step?.events ?? []);
}
