// The registry source (spec.source.oci), pure: when the tag is resolved again and what a published
// digest is called. A digest is published as `REGISTRY/REPOSITORY@sha256:…`; there is no link, so
// nothing expires and nothing is renewed.
import { parseDuration, REQUESTED_AT_ANNOTATION, type StaticExportRelease } from '../../../crd/index.ts';
import type { Failure } from '../../failures.ts';
import type { OciSource, Status } from '../release-model.ts';

function ociSource(release: StaticExportRelease): OciSource | undefined {
  return release.spec.source?.oci;
}

/** The reference published for a digest: what the site chart pulls and a pod spec may name. */
export const ociReference = (source: OciSource, digest: string) => `${source.repository}@${digest}`;

function intervalMs(source: OciSource): number {
  return parseDuration(source.interval) ?? 5 * 60_000;
}

/** The digest a reference published from this source names, if it is one of this repository's. */
export function servedDigest(release: StaticExportRelease, source: OciSource): string | undefined {
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
export function refused(release: StaticExportRelease): boolean {
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

export function untilNextCheck(status: Status, source: OciSource, now: Date): number | undefined {
  const checked = status.oci?.checkedAt ? Date.parse(status.oci.checkedAt) : undefined;
  return checked === undefined ? undefined : checked + intervalMs(source) - now.getTime();
}

/**
 * The status as the registry's rules read it: a resolved tag is recorded as checked (and the spec
 * and any request as seen). A rejection holds for its digest under the spec that judged it; a new
 * spec judges again.
 */
export function withCheck(status: Status, release: StaticExportRelease, digest: string, now: Date): Status {
  const gen = release.metadata.generation;
  const requested = release.metadata.annotations?.[REQUESTED_AT_ANNOTATION];
  const { rejected, ...rest } = status.oci ?? {};
  const keep = rejected && rejected.digest === digest && rejected.generation === gen;
  return {
    ...status,
    observedGeneration: gen,
    oci: { ...rest, digest, checkedAt: now.toISOString(), ...(keep ? { rejected } : {}) },
    ...(requested === undefined ? {} : { lastHandledRequestedAt: requested }),
  };
}
