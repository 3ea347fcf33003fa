// Git write-back: the effect of writeBackDue's action (write-back.ts decides it and records its
// condition) and the pure fold of its outcome. The URL is checked against --allowed-git-urls before
// its Secret is read, and nothing but the version is written.
import { readGitCredentials, readSigningKey } from '../../../git/credentials.ts';
import { renderCommitMessage } from '../../../git/message.ts';
import { isSshUrl } from '../../../git/ssh-url.ts';
import type { WriteVersionOutcome } from '../../../git/types.ts';
import { gitUrlAllowed } from '../../../git/url-policy.ts';
import { failureEvent } from '../../failures.ts';
import type { ReconcileResult } from '../../types.ts';
import { siteName } from '../export/export-site.ts';
import { meant, type ReleaseRun, type Step, settle } from '../release-effect.ts';
import type { Snapshot } from '../release-model.ts';
import type { ReleaseReconcilerOptions } from '../release-options.ts';
import type { Look } from '../sources/source.ts';
import { afterWriteBack, withWriteBackFailure, writeBackFailure } from './write-back.ts';

/** What a write-back came to: committed (or found written already), or failed with its reason. */
export type WriteBackOutcome =
  | { kind: 'written'; outcome: Extract<WriteVersionOutcome, { outcome: 'Committed' | 'AlreadyWritten' }> }
  | {
      kind: 'failed';
      reason: Parameters<typeof writeBackFailure>[1];
      message: string;
      retryAfterMs?: number | undefined;
    };

/** Commits the served version to spec.gitWriteBack's repository. */
export async function pushVersion(
  options: ReleaseReconcilerOptions,
  { observed: o }: Look,
  run: ReleaseRun,
): Promise<ReconcileResult> {
  const release = meant(o.release, run);
  const g = release.spec.gitWriteBack;
  const version = run.status.current?.version;
  if (!g || !version) return {};
  const namespace = release.metadata.namespace ?? '';
  const site = o.source === 'registry' ? o.oci.repository : siteName(release.spec);
  const outcome = await write(
    options,
    { namespace, name: release.metadata.name ?? '' },
    g,
    site,
    version,
    run,
  );
  const step = foldWriteBack({ now: o.now, release }, outcome);
  if (step.kind === 'commit' && step.retryAs)
    options.logger.warn(
      { release: `${namespace}/${release.metadata.name}`, reason: step.retryAs.reason },
      step.retryAs.message,
    );
  return settle(run, step);
}

type GitWriteBack = NonNullable<Snapshot['release']['spec']['gitWriteBack']>;

async function write(
  options: ReleaseReconcilerOptions,
  { namespace, name }: { namespace: string; name: string },
  g: GitWriteBack,
  site: string,
  version: string,
  run: ReleaseRun,
): Promise<WriteBackOutcome> {
  const allowed = gitUrlAllowed(g.url, options.gitUrls ?? { allowed: [], allowInsecure: false });
  if (!allowed.allowed) return { kind: 'failed', reason: allowed.reason, message: allowed.message };
  const transport = isSshUrl(g.url) ? 'ssh' : 'https';
  const read = await readGitCredentials(
    options.kube,
    namespace,
    g.secretRef,
    options.reads?.secrets,
    transport,
  );
  if ('failure' in read) return { kind: 'failed', ...read.failure };
  const signing = g.signingKey
    ? await readSigningKey(options.kube, namespace, g.signingKey.secretRef, options.reads?.secrets)
    : undefined;
  if (signing && 'failure' in signing) return { kind: 'failed', ...signing.failure };
  // Loaded on the first write-back: isomorphic-git and its inflater cost the operator about 4 MB of
  // memory, which every release without write-back would pay otherwise.
  const { writeVersion } = await import('../../../git/write-version.ts');
  const outcome = await writeVersion({
    target: {
      url: g.url,
      path: g.path,
      field: g.field,
      ...(g.branch === undefined ? {} : { branch: g.branch }),
      ...(g.pushBranch === undefined ? {} : { pushBranch: g.pushBranch }),
    },
    credentials: read.credentials,
    version,
    author: g.author,
    message: renderCommitMessage(g.messageTemplate, {
      site,
      // history[0] is the version served now.
      oldVersion: run.status.history?.find((h) => h.version !== version)?.version,
      newVersion: version,
      release: `${namespace}/${name}`,
    }),
    allowInsecureHttp: options.gitUrls?.allowInsecure ?? false,
    ...(signing ? { signingKey: signing.key } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
  });
  if (outcome.outcome === 'Failed')
    return { kind: 'failed', reason: outcome.reason, message: outcome.message };
  return { kind: 'written', outcome };
}

/**
 * What a write-back makes of the release (`release` as meant). Recorded in GitWriteBack, not Ready:
 * the site serves the version all the same; a failure is retried by its own rule. Written: the
 * commit is recorded, and the foot of the ladder is looked at again (the rollout under way is
 * watched on).
 */
export function foldWriteBack({ release, now }: Snapshot, outcome: WriteBackOutcome): Step {
  const status = release.status ?? {};
  if (outcome.kind === 'written')
    return { kind: 'commit', ...afterWriteBack({ release, now }, outcome.outcome), requeueAfterMs: 0 };
  const f = writeBackFailure(status, outcome.reason, outcome.message, outcome.retryAfterMs);
  return {
    kind: 'commit',
    status: withWriteBackFailure(status, f, release.metadata.generation, now),
    events: [failureEvent(f)],
    retryAs: f,
  };
}
