// spec.gitWriteBack at the foot of the ladder: the served version goes to Git once, after the
// workloads were told; a renewal keeps its commit, a new version or another place writes again.

import { describe, expect, it } from 'vitest';
import type { Failure } from '../../../../../src/controllers/failures.ts';
import { choose } from '../../../../../src/controllers/static-export-release/decide-release.ts';
import { afterPublish } from '../../../../../src/controllers/static-export-release/export/publish-content.ts';
import { releaseConditions } from '../../../../../src/controllers/static-export-release/release-conditions.ts';
import {
  afterWriteBack,
  gitTargetText,
  withWriteBackFailure,
  writeBackFailure,
} from '../../../../../src/controllers/static-export-release/write-back/write-back.ts';
import type { Condition } from '../../../../../src/runtime/conditions.ts';
import {
  MIN,
  NOW,
  observed,
  release,
  servingV1,
  V1,
  V2,
} from '../../../../support/fixtures/release-fixtures.ts';
import { ociRelease } from '../registry/oci-fixtures.ts';

const GIT = { url: 'https://git.example.com/acme/gitops.git', path: 'sites/docs/values.yaml' };
const withGit = (status = servingV1(), git: object = GIT) => release({ spec: { gitWriteBack: git }, status });
const written = (r = withGit()) => r.spec.gitWriteBack && gitTargetText(r.spec.gitWriteBack);
const decided = (r: ReturnType<typeof release>) => choose(observed(r));

describe('Git write-back in the ladder', () => {
  it('writes the served version once nothing else is due, at the foot', () => {
    const chosen = decided(withGit());
    expect(chosen.rule).toBe('settle');
    expect(chosen.decision.action).toEqual({ kind: 'writeBack' });
  });

  it('does nothing more once the commit holding the version is recorded for the same place', () => {
    const r = withGit();
    const done = withGit(servingV1({}, { gitCommit: 'a'.repeat(40), gitTarget: written(r) }));
    expect(decided(done).decision.action).toEqual({ kind: 'none' });
  });

  it('writes again when spec.gitWriteBack names another file, branch or repository', () => {
    const old = written(withGit(servingV1(), { ...GIT, path: 'old/values.yaml' }));
    const moved = withGit(servingV1({}, { gitCommit: 'a'.repeat(40), gitTarget: old }));
    expect(decided(moved).decision.action).toEqual({ kind: 'writeBack' });
  });

  it('without spec.gitWriteBack, or with nothing served, there is nothing to write', () => {
    expect(decided(release({ status: servingV1() })).decision.action).toEqual({ kind: 'none' });
    expect(decided(withGit({})).decision.action).not.toEqual({ kind: 'writeBack' });
  });

  it('a registry release writes its served reference too', () => {
    const r = ociRelease();
    const git = { ...r, spec: { ...r.spec, gitWriteBack: withGit().spec.gitWriteBack } };
    expect(choose(observed(git)).decision.action).toEqual({ kind: 'writeBack' });
  });

  it('a renewal keeps the commit (same version); new content drops it, so the new version is written', () => {
    const commit = 'b'.repeat(40);
    const r = withGit(servingV1({}, { gitCommit: commit, gitTarget: written() }));
    const link = { jobId: 'se_1', expiresAt: new Date(NOW.getTime() + 60 * MIN), wrote: true };
    const renewed = afterPublish({ now: NOW, release: r }, { mode: 'Renew', version: V1, ...link });
    expect(renewed.status.current).toMatchObject({ gitCommit: commit, gitTarget: written() });
    const fresh = afterPublish({ now: NOW, release: r }, { mode: 'NewContent', version: V2, ...link });
    expect(fresh.status.current?.version).toBe(V2);
    expect(fresh.status.current?.gitCommit).toBeUndefined();
  });
});

describe('afterWriteBack', () => {
  it('records the commit and where, and tells of a new commit by a Committed event', () => {
    const r = withGit();
    const folded = afterWriteBack(
      { now: NOW, release: r },
      { outcome: 'Committed', commit: 'c'.repeat(40), branch: 'main', attempts: 1 },
    );
    expect(folded.status.current).toMatchObject({
      version: V1,
      gitCommit: 'c'.repeat(40),
      gitTarget: written(r),
    });
    expect(folded.events).toEqual([
      {
        type: 'Normal',
        reason: 'Committed',
        note: `Committed ${V1} to sites/docs/values.yaml (staticExport.version) on the remote's default branch of https://git.example.com/acme/gitops.git as ${'c'.repeat(40)}`,
      },
    ]);
  });

  it('a file that already holds the version records its head commit without an event', () => {
    const folded = afterWriteBack(
      { now: NOW, release: withGit() },
      { outcome: 'AlreadyWritten', commit: 'd'.repeat(40), branch: 'main' },
    );
    expect(folded.status.current?.gitCommit).toBe('d'.repeat(40));
    expect(folded.events).toEqual([]);
  });
});

describe('writeBackFailure', () => {
  it('a refusal needs the user (Stalled, 5 minutes); a moving branch or a down server is retried with backoff', () => {
    const status = servingV1();
    expect(writeBackFailure(status, 'GitAuthRefused', 'HTTP 401')).toMatchObject({
      reason: 'GitAuthRefused',
      stalled: true,
      retryAfterMs: 5 * MIN,
    });
    const moving = writeBackFailure(status, 'GitNonFastForward', 'rejected 4 times');
    expect(moving).toMatchObject({ stalled: false });
    expect(moving.retryAfterMs).toBeUndefined();
    expect(moving.message).toContain(`The site keeps serving it`);
    expect(moving.message).toContain(V1);
  });

  it("a missing Secret is looked for again as soon as the Secret's reader says", () => {
    expect(writeBackFailure(servingV1(), 'GitSecretInvalid', 'no Secret', 30_000).retryAfterMs).toBe(30_000);
  });
});

describe('the GitWriteBack condition (Ready keeps saying what is served)', () => {
  const conditionsOf = (r: ReturnType<typeof release>, status = r.status ?? {}, f?: Failure) =>
    releaseConditions(r, status, f, NOW).conditions ?? [];
  const of = (list: Condition[], type: string) => list.find((c) => c.type === type);

  it('a failed write-back sets GitWriteBack False with its reason; Ready stays True (Published), nothing Stalled', () => {
    const r = withGit();
    const f = writeBackFailure(servingV1(), 'GitAuthRefused', 'HTTP 401');
    const failed = withWriteBackFailure(servingV1(), f, 1, NOW);
    const list = conditionsOf(r, failed);
    expect(of(list, 'Ready')).toMatchObject({ status: 'True', reason: 'Published' });
    expect(of(list, 'Stalled')).toBeUndefined();
    expect(of(list, 'GitWriteBack')).toMatchObject({ status: 'False', reason: 'GitAuthRefused' });
    expect(of(list, 'GitWriteBack')?.message).toContain('The site keeps serving it');
  });

  it('the failure stays across other status writes until the version is written; then True, naming the commit', () => {
    const r = withGit();
    const f = writeBackFailure(servingV1(), 'GitUnreachable', 'timed out');
    const failed = { ...withWriteBackFailure(servingV1(), f, 1, NOW) };
    // Another write (a renewal, a rollout step) derives the conditions again.
    expect(of(conditionsOf(r, failed), 'GitWriteBack')?.reason).toBe('GitUnreachable');
    const commit = 'e'.repeat(40);
    const done = {
      ...failed,
      current: { ...failed.current, version: V1, gitCommit: commit, gitTarget: written(r) },
    };
    expect(of(conditionsOf(r, done), 'GitWriteBack')).toMatchObject({ status: 'True', reason: 'Committed' });
    expect(of(conditionsOf(r, done), 'GitWriteBack')?.message).toContain(commit);
  });

  it('a failure of something else (the export) leaves GitWriteBack as it was', () => {
    const r = withGit();
    const failed = withWriteBackFailure(
      servingV1(),
      writeBackFailure(servingV1(), 'GitPathMissing', 'no file'),
      1,
      NOW,
    );
    const exportFailure: Failure = { reason: 'ApiUnavailable', message: 'down', stalled: false };
    const list = conditionsOf(r, failed, exportFailure);
    expect(of(list, 'Ready')?.reason).toBe('ApiUnavailable');
    expect(of(list, 'GitWriteBack')?.reason).toBe('GitPathMissing');
  });

  it('Unknown while the version waits to be written; absent without spec.gitWriteBack', () => {
    expect(of(conditionsOf(withGit()), 'GitWriteBack')).toMatchObject({
      status: 'Unknown',
      reason: 'WriteBackPending',
    });
    expect(of(conditionsOf(withGit({})), 'GitWriteBack')).toMatchObject({
      status: 'Unknown',
      reason: 'WriteBackPending',
    });
    expect(of(conditionsOf(release({ status: servingV1() })), 'GitWriteBack')).toBeUndefined();
  });
});
