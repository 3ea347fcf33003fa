// Folding the outcome of a registry pull or rewrite back into status (pure).
import { gateRefused, served } from '../export/after-export.ts';
import type { Folded, RegistryObserved, Status } from '../release-model.ts';
import { ociReference, untilNextCheck } from './registry-schedule.ts';

/** What the registry folds read: the release, the clock, and the source it follows. */
type RegistrySnapshot = Pick<RegistryObserved, 'now' | 'release' | 'oci'>;

interface OciPublishOutcome {
  digest: string;
  /** Content version (sha256-…) of the site files. */
  contentVersion: string;
  pageCount: number;
  sizeBytes: number;
  /** Whether the target was written (false: it already held these values). */
  wrote: boolean;
  verified: boolean;
}

export function afterOciPublish({ release, now, oci }: RegistrySnapshot, out: OciPublishOutcome): Folded {
  const base = release.status ?? {};
  const version = ociReference(oci, out.digest);
  const { rejected: _, ...ociStatus } = base.oci ?? {};
  const s: Status = {
    ...base,
    ...served(
      base,
      now,
      out.wrote,
      { version, contentVersion: out.contentVersion, sizeBytes: out.sizeBytes, pageCount: out.pageCount },
      { version, pageCount: out.pageCount },
    ),
    oci: ociStatus,
  };
  return {
    status: s,
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
export function afterOciRewrite({ release }: RegistrySnapshot): Folded {
  const base = release.status ?? {};
  return {
    status: base,
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
  { release, now, oci }: RegistrySnapshot,
  rejected: { digest: string; contentVersion: string; message: string },
): Folded & { requeueAfterMs?: number } {
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
  return gateRefused(
    release,
    s,
    `${ociReference(oci, rejected.digest)} (${rejected.contentVersion})`,
    rejected.message,
    untilNextCheck(s, oci, now),
  );
}
