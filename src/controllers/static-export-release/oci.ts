// The registry source (spec.source.oci), as pure functions: when the tag is resolved again, what a
// resolved digest asks for, and how a pull's outcome is folded into status. A digest is published
// as `REGISTRY/REPOSITORY@sha256:…`; there is no link, so nothing expires and nothing is renewed.
import {
  HISTORY_LIMIT,
  parseDuration,
  REQUESTED_AT_ANNOTATION,
  type StaticExportRelease,
} from '../../crd/index.ts';
import { type Failure, failureEvent } from '../failures.ts';
import type { EventNote } from '../types.ts';
import {
  clampDelay,
  type Decision,
  type Observed,
  type Status,
  settle,
  withFailure,
  withHealthy,
} from './decide.ts';

/** What resolving spec.source.oci.tag gave. */
export type OciCheck = { kind: 'resolved'; digest: string } | { kind: 'failed'; failure: Failure };

/**
 * `pull`: fetch, verify and check the image at `digest`, then publish it. `rewrite`: the target lost
 * the served reference; write it again (no pull: it is in status).
 */
export type OciAction = { kind: 'pull'; digest: string } | { kind: 'rewrite' };

type OciSource = NonNullable<NonNullable<StaticExportRelease['spec']['source']>['oci']>;

export function ociSource(release: StaticExportRelease): OciSource | undefined {
  return release.spec.source?.oci;
}

/** The reference published for a digest: what the site chart pulls and a pod spec may name. */
export const ociReference = (source: OciSource, digest: string) => `${source.repository}@${digest}`;

function intervalMs(source: OciSource): number {
  return parseDuration(source.interval) ?? 5 * 60_000;
}

/** The digest a reference published from this source names, if it is one of this repository's. */
function servedDigest(release: StaticExportRelease, source: OciSource): string | undefined {
  const v = release.status?.current?.version;
  const prefix = `${source.repository}@`;
  return v?.startsWith(prefix) ? v.slice(prefix.length) : undefined;
}

/**
 * Whether the tag must be resolved now: never checked, the spec changed, an export was asked for
 * (the requested-at annotation), the interval is up, or the digest seen last is not served yet
 * (a pull failed or is still to come).
 */
export function ociCheckDue(release: StaticExportRelease, now: Date): boolean {
  const source = ociSource(release);
  if (!source) return false;
  const s = release.status ?? {};
  const checked = s.oci?.checkedAt ? Date.parse(s.oci.checkedAt) : undefined;
  if (checked === undefined) return true;
  if ((release.metadata.generation ?? 0) !== (s.observedGeneration ?? 0)) return true;
  const requested = release.metadata.annotations?.[REQUESTED_AT_ANNOTATION];
  if (requested !== undefined && requested !== s.lastHandledRequestedAt) return true;
  if (now.getTime() >= checked + intervalMs(source)) return true;
  return s.oci?.digest !== undefined && s.oci.digest !== servedDigest(release, source) && !refused(release);
}

/** The publish gate refused the digest seen last, under this spec: not pulled again. */
function refused(release: StaticExportRelease): boolean {
  const s = release.status ?? {};
  const r = s.oci?.rejected;
  return r !== undefined && r.digest === s.oci?.digest && r.generation === release.metadata.generation;
}

/** A failure of this source is looked at again by the next check at the latest: a fixed push shows then. */
export function withinInterval(release: StaticExportRelease, f: Failure): Failure {
  const source = ociSource(release);
  if (!source || f.retryAfterMs === undefined) return f;
  return { ...f, retryAfterMs: Math.min(f.retryAfterMs, intervalMs(source)) };
}

function untilNextCheck(status: Status, source: OciSource, now: Date): number | undefined {
  const checked = status.oci?.checkedAt ? Date.parse(status.oci.checkedAt) : undefined;
  return checked === undefined ? undefined : checked + intervalMs(source) - now.getTime();
}

export function decideOci(o: Observed): Decision {
  const { release, now } = o;
  const source = ociSource(release) as OciSource;
  const gen = release.metadata.generation;
  let status: Status = release.status ?? {};
  if (o.blocked) {
    return {
      action: { kind: 'none' },
      status: withFailure(status, o.blocked, gen, now),
      events: [failureEvent(o.blocked)],
      failure: o.blocked,
    };
  }
  const check = o.oci;
  if (check?.kind === 'failed') {
    // Looked at, even if in vain: the next look follows the failure's retry rule.
    const f = withinInterval(release, check.failure);
    return {
      action: { kind: 'none' },
      status: withFailure(status, f, gen, now),
      events: [failureEvent(f)],
      failure: f,
    };
  }
  if (check?.kind === 'resolved') {
    const requested = release.metadata.annotations?.[REQUESTED_AT_ANNOTATION];
    const { rejected, ...rest } = status.oci ?? {};
    // A rejection holds for its digest under the spec that judged it; a new spec judges again.
    const keep = rejected && rejected.digest === check.digest && rejected.generation === gen;
    status = {
      ...status,
      observedGeneration: gen,
      oci: { ...rest, digest: check.digest, checkedAt: now.toISOString(), ...(keep ? { rejected } : {}) },
      ...(requested === undefined ? {} : { lastHandledRequestedAt: requested }),
    };
    const seen = { ...release, status };
    if (check.digest !== servedDigest(seen, source) && !refused(seen))
      return { action: { kind: 'pull', digest: check.digest }, status, events: [] };
  }
  // The target no longer holds the served reference: written again from status.
  if (status.current?.version && o.targetDrifted) return { action: { kind: 'rewrite' }, status, events: [] };
  return settle(o, status, untilNextCheck(status, source, now));
}

export interface OciPublishOutcome {
  digest: string;
  /** Content version (sha256-…) of the site files. */
  contentVersion: string;
  pageCount: number;
  sizeBytes: number;
  /** Whether the target was written (false: it already held these values). */
  wrote: boolean;
  verified: boolean;
}

export function afterOciPublish(
  o: Observed,
  out: OciPublishOutcome,
): { status: Status; events: EventNote[] } {
  const { release, now } = o;
  const source = ociSource(release) as OciSource;
  const base = release.status ?? {};
  const version = ociReference(source, out.digest);
  const current = {
    version,
    contentVersion: out.contentVersion,
    sizeBytes: out.sizeBytes,
    pageCount: out.pageCount,
    appliedAt: out.wrote || !base.current?.appliedAt ? now.toISOString() : base.current.appliedAt,
    ...(base.current?.rollout ? { rollout: base.current.rollout } : {}),
  };
  const history = [
    { version, pageCount: out.pageCount, appliedAt: now.toISOString() },
    ...(base.history ?? []).filter((h) => h.version !== version),
  ].slice(0, HISTORY_LIMIT);
  const { rejected: _, ...oci } = base.oci ?? {};
  const s: Status = { ...base, current, history, oci };
  return {
    status: withHealthy(release, s, now),
    events: [
      {
        type: 'Normal',
        reason: 'Published',
        note: `Published ${version} (${out.contentVersion}, ${out.pageCount} pages${out.verified ? ', signature verified' : ''})`,
      },
    ],
  };
}

/** The target was written again with the served reference. */
export function afterOciRewrite(o: Observed): { status: Status; events: EventNote[] } {
  const { release, now } = o;
  const base = release.status ?? {};
  return {
    status: withHealthy(release, base, now),
    events: [
      {
        type: 'Warning',
        reason: 'TargetRepaired',
        note: `The target no longer held ${base.current?.version}; wrote it again`,
      },
    ],
  };
}

/** The image failed the publish gate: nothing written, the served version stays, not pulled again. */
export function afterOciGateFailed(
  o: Observed,
  rejected: { digest: string; contentVersion: string; message: string },
): { status: Status; events: EventNote[]; requeueAfterMs?: number } {
  const { release, now } = o;
  const source = ociSource(release) as OciSource;
  const base = release.status ?? {};
  const s: Status = {
    ...base,
    oci: {
      ...base.oci,
      rejected: {
        digest: rejected.digest,
        ...(release.metadata.generation === undefined ? {} : { generation: release.metadata.generation }),
        message: rejected.message,
      },
    },
  };
  const served = base.current?.version;
  const next = untilNextCheck(s, source, now);
  return {
    status: withHealthy(release, s, now),
    events: [
      {
        type: 'Warning',
        reason: 'PublishGateFailed',
        note: `${ociReference(source, rejected.digest)} (${rejected.contentVersion}) was not published: ${rejected.message}; ${
          served ? `still serving ${served}` : 'nothing is served yet'
        }`,
      },
    ],
    ...(next === undefined ? {} : { requeueAfterMs: clampDelay(next) }),
  };
}
