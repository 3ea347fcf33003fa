// A link's answer and a renewal's or repair's outcome, folded (pure).
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../../../src/api/index.ts';
import { foldFreshLink } from '../../../../../src/controllers/static-export-release/link/fresh-link.ts';
import { foldLink } from '../../../../../src/controllers/static-export-release/link/job-link.ts';
import type { Of } from '../../../../../src/controllers/static-export-release/release-effect.ts';
import { DEFAULT_TUNABLES } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { MIN, NOW, release, servingV1, V1 } from '../../../../support/fixtures/release-fixtures.ts';

const bundle = (expiresInMs: number) => ({
  jobId: 'se_1',
  bundleUrl: 'https://bundles.example.com/se_1.tar.gz?X-Signature=secret',
  expiresAt: new Date(NOW.getTime() + expiresInMs),
});
const renew: Of<'publish'> = { kind: 'publish', mode: 'Renew', jobId: 'se_1' };
const snapshot = () => ({ now: NOW, release: release({ status: servingV1() }) });

describe('foldLink', () => {
  it('a live link: the publish goes on with it', () => {
    const b = bundle(60 * MIN);
    expect(foldLink(snapshot(), 'se_1', { kind: 'link', bundle: b }, DEFAULT_TUNABLES)).toEqual({
      bundle: b,
    });
  });

  it('a link that arrived expired: refused (nothing written), asked for again in 5 minutes', () => {
    const got = foldLink(snapshot(), 'se_1', { kind: 'link', bundle: bundle(1_000) }, DEFAULT_TUNABLES);
    expect(got).toMatchObject({
      step: { kind: 'fail', failure: { reason: 'BundleInvalid', retryAfterMs: 5 * MIN } },
    });
    expect(JSON.stringify(got)).not.toContain('X-Signature');
  });

  it("the served job's first 404: noted, and asked again a while later", () => {
    const got = foldLink(
      snapshot(),
      'se_1',
      {
        kind: 'notFound',
        error: new NotFoundError('no such job', { operation: 'generateBundle', status: 404 }),
      },
      DEFAULT_TUNABLES,
    );
    expect(got).toMatchObject({
      step: { kind: 'commit', status: { current: { jobMissingSince: NOW.toISOString() } } },
    });
    if ('step' in got && got.step.kind === 'commit')
      expect(got.step.requeueAfterMs).toBe(DEFAULT_TUNABLES.jobGoneConfirmMs);
  });
});

describe('foldFreshLink', () => {
  it('renewed: the new expiry is recorded with its renewal, the workloads looked at next', () => {
    const b = bundle(60 * MIN);
    const step = foldFreshLink(snapshot(), renew, { kind: 'written', bundle: b, wrote: true });
    expect(step).toMatchObject({ kind: 'commit', requeueAfterMs: 0 });
    if (step.kind !== 'commit') return;
    expect(step.status.current).toMatchObject({
      version: V1,
      expiresAt: b.expiresAt.toISOString(),
      renewedAt: NOW.toISOString(),
    });
    expect(step.events.map((e) => e.reason)).toEqual(['LinkRenewed']);
    expect(JSON.stringify(step)).not.toContain('X-Signature');
  });

  it('repaired: told by a Warning, no renewal recorded', () => {
    const step = foldFreshLink(
      snapshot(),
      { ...renew, mode: 'Repair' },
      { kind: 'written', bundle: bundle(60 * MIN), wrote: true },
    );
    if (step.kind !== 'commit') throw new Error(step.kind);
    expect(step.events).toMatchObject([{ type: 'Warning', reason: 'TargetRepaired' }]);
    expect(step.status.current?.renewedAt).toBeUndefined();
  });

  it('refused by the probe: not written, the served link stays, asked for again in a minute', () => {
    const s = snapshot();
    const step = foldFreshLink(s, renew, { kind: 'refused', error: new Error('403 Forbidden') });
    expect(step).toMatchObject({
      kind: 'fail',
      status: s.release.status,
      failure: { reason: 'LinkRefused', retryAfterMs: MIN },
    });
  });
});
