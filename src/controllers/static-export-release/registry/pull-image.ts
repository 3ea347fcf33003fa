// Following a registry's tag: the effects of ociNewDigest's pull and ociRewrite's rewrite
// (registry-rules.ts) and the pure folds of their outcomes. A pull fetches, verifies and checks the
// image at the digest, then writes it to the target; a rewrite writes the served reference again.
import { secretRefText } from '../../credentials.ts';
import { classifyError } from '../../failures.ts';
import type { ReconcileResult } from '../../types.ts';
import { gateRefused, served } from '../export/publish-content.ts';
import { judgeNewContent } from '../export/publish-gate.ts';
import { meant, type Of, type ReleaseRun, type Step, settle } from '../release-effect.ts';
import type { Folded, RegistryObserved, Status } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import { targetOf } from '../sources/serving.ts';
import type { RegistryLook } from '../sources/source.ts';
import { type OpenedRegistry, type PulledSite, pullSite } from './registry-client.ts';
import { ociReference, untilNextCheck, withinInterval } from './registry-schedule.ts';

/** A registry release whose tag was checked this reconcile: the client the check opened. */
export type CheckedLook = RegistryLook & { registry: OpenedRegistry };

/** What a pull came to. */
export type PullOutcome =
  | { kind: 'failed'; error: unknown }
  | { kind: 'gateRefused'; digest: string; contentVersion: string; message: string }
  | ({ kind: 'published' } & OciPublishOutcome);

/** Pulls, verifies and checks the image at the digest, then writes it to the target. */
export async function pullImage(
  options: ReleaseReconcilerOptions,
  { observed: o, registry }: CheckedLook,
  { digest }: Of<'pull'>,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const { signal } = run;
  const snapshot = { ...o, release: meant(o.release, run) };
  let pulled: PulledSite;
  try {
    pulled = await pullSite(registry, digest, {
      ...(options.download?.limits ? { limits: options.download.limits } : {}),
      signal,
    });
  } catch (e) {
    if (signal?.aborted) throw e;
    return settle(run, foldPull(snapshot, { kind: 'failed', error: e }));
  }
  const reference = ociReference(o.oci, digest);
  const verdict = judgeNewContent(snapshot.release, reference, pulled.site);
  const contentVersion = pulled.version;
  if (!verdict.ok)
    return settle(
      run,
      foldPull(snapshot, { kind: 'gateRefused', digest, contentVersion, message: verdict.message }),
    );
  const wrote = await targetOf(options, snapshot.release).write(
    { bundleUrl: '', version: contentVersion, ociReference: reference },
    o.now,
    signal,
  );
  const { pages: pageCount } = pulled.site;
  const { sizeBytes, verified } = pulled;
  return settle(
    run,
    foldPull(snapshot, { kind: 'published', digest, contentVersion, pageCount, sizeBytes, wrote, verified }),
  );
}

/**
 * What a pull makes of the release (`release` as meant): a failed pull is retried by the next check
 * at the latest; an image the gate refused is not pulled again under this spec; a published one rolls
 * the workloads next (a new reference), then the next check is scheduled.
 */
export function foldPull(snapshot: RegistrySnapshot, outcome: PullOutcome): Step {
  const { release } = snapshot;
  if (outcome.kind === 'failed') {
    const failure = withinInterval(release, classifyError(outcome.error, secretRefText(release)));
    return { kind: 'fail', status: release.status ?? {}, failure, cause: outcome.error };
  }
  if (outcome.kind === 'published') {
    const { kind: _, ...out } = outcome;
    return { kind: 'commit', ...afterOciPublish(snapshot, out), requeueAfterMs: 0 };
  }
  const { kind: _, ...rejected } = outcome;
  const { requeueAfterMs, ...next } = afterOciGateFailed(snapshot, rejected);
  return { kind: 'commit', ...next, ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) };
}

/** The target lost the served reference: it is written again from status (no pull). */
export async function rewriteReference(
  options: ReleaseReconcilerOptions,
  { observed: o }: RegistryLook,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const release = meant(o.release, run);
  const current = release.status?.current;
  const digest = current?.version?.slice(o.oci.repository.length + 1) ?? '';
  await targetOf(options, release).write(
    { bundleUrl: '', version: current?.contentVersion ?? '', ociReference: ociReference(o.oci, digest) },
    o.now,
    run.signal,
  );
  return settle(run, { kind: 'commit', ...afterOciRewrite({ ...o, release }), requeueAfterMs: 0 });
}

/** What the registry folds read: the release, the clock, and the source it follows. */
export type RegistrySnapshot = Pick<RegistryObserved, 'now' | 'release' | 'oci'>;

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
