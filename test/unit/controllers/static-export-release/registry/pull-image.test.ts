// A pull's outcome, folded (pure): failed, refused by the publish gate, or published.
import { describe, expect, it } from 'vitest';
import { foldPull } from '../../../../../src/controllers/static-export-release/registry/pull-image.ts';
import type { RegistryObserved } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { NOW } from '../../../../support/fixtures/release-fixtures.ts';
import { D1, D2, ociRelease, REPO, servingD1 } from './oci-fixtures.ts';

const snapshot = () => {
  const release = ociRelease(servingD1);
  const oci = release.spec.source?.oci as RegistryObserved['oci'];
  return { now: NOW, release, oci };
};
const C2 = `sha256-${'b'.repeat(64)}`;

describe('foldPull', () => {
  it('failed: recorded on top of the status, the served image stays', () => {
    const error = new Error('connection refused');
    const step = foldPull(snapshot(), { kind: 'failed', error });
    expect(step).toMatchObject({ kind: 'fail', status: servingD1, cause: error });
    if (step.kind === 'fail') expect(step.failure.stalled).toBe(false);
  });

  it('refused by the gate: the digest is not pulled again under this spec, the served one stays', () => {
    const step = foldPull(snapshot(), {
      kind: 'gateRefused',
      digest: D2,
      contentVersion: C2,
      message: 'only 1 pages',
    });
    expect(step).toMatchObject({
      kind: 'commit',
      events: [{ type: 'Warning', reason: 'PublishGateFailed' }],
    });
    if (step.kind !== 'commit') return;
    expect(step.status.oci?.rejected).toMatchObject({ digest: D2, message: 'only 1 pages' });
    expect(step.status.current).toEqual(servingD1.current);
  });

  it('published: served from now on, the workloads looked at next', () => {
    const step = foldPull(snapshot(), {
      kind: 'published',
      digest: D2,
      contentVersion: C2,
      pageCount: 9,
      sizeBytes: 1_000,
      wrote: true,
      verified: true,
    });
    expect(step).toMatchObject({ kind: 'commit', requeueAfterMs: 0, events: [{ reason: 'Published' }] });
    if (step.kind !== 'commit') return;
    expect(step.status.current).toMatchObject({ version: `${REPO}@${D2}`, contentVersion: C2, pageCount: 9 });
    expect(step.status.history?.[1]?.version).not.toBe(`${REPO}@${D2}`);
    expect(D1).not.toBe(D2);
  });
});
