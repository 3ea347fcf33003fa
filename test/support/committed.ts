// What the skeleton writes of a decision or a fold: its status with the conditions derived at commit
// (from the status and the failure it records). The pure tests read conditions through these, as
// the API server would store them.
import { jobConditions } from '../../src/controllers/agent-job/agent-job-conditions.ts';
import type {
  Decision as JobDecision,
  Observed as JobObserved,
} from '../../src/controllers/agent-job/agent-job-model.ts';
import { decide as jobDecide } from '../../src/controllers/agent-job/decide-agent-job.ts';
import type { Failure } from '../../src/controllers/failures.ts';
import { decide } from '../../src/controllers/static-export-release/decide-release.ts';
import { releaseConditions } from '../../src/controllers/static-export-release/release-conditions.ts';
import type {
  Decision,
  Observed,
  Status,
  Tunables,
} from '../../src/controllers/static-export-release/release-model.ts';
import type { AgentJob, StaticExportRelease } from '../../src/crd/index.ts';

/** `step` (a decision or a fold's outcome) as written for `release` at `now`. */
export function committed<T extends { status: Status; failure?: Failure; pending?: true }>(
  release: StaticExportRelease,
  step: T,
  now: Date,
): T {
  if (step.pending) return step;
  return { ...step, status: releaseConditions(release, step.status, step.failure, now) };
}

/** A release's decision as written. */
export const decided = (o: Observed, tun?: Tunables): Decision => committed(o.release, decide(o, tun), o.now);

/** A fold of a snapshot's release, as written. */
export const folded =
  <S extends { release: StaticExportRelease; now: Date }, A extends unknown[], T extends { status: Status }>(
    fold: (s: S, ...rest: A) => T,
  ) =>
  (s: S, ...rest: A): T =>
    committed(s.release, fold(s, ...rest), s.now);

/** An AgentJob's decision as written. */
export function jobDecided(o: JobObserved): JobDecision {
  const d = jobDecide(o);
  return { ...d, status: jobConditions(o.job, d.status, d.failure, o.now) };
}

/** An AgentJob status as written for `job` at `now`. */
export const jobCommitted = (job: AgentJob, status: JobDecision['status'], now: Date) =>
  jobConditions(job, status, undefined, now);
