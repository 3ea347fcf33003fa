import { describe, expect, it } from 'vitest';
import type { Failure } from '../../../../../src/controllers/failures.ts';
import {
  blocked,
  deleting,
  suspended,
} from '../../../../../src/controllers/static-export-release/common-rules/common-rules.ts';
import { committed } from '../../../../support/fixtures/committed.ts';
import {
  at,
  NOW,
  observed,
  platformCase,
  release,
  servingV1,
} from '../../../../support/fixtures/release-fixtures.ts';

const f: Failure = { reason: 'SecretNotFound', message: 'Secret web/key not found', stalled: true };

describe('blocked', () => {
  it.each([
    ['nothing found before the calls', {}, undefined],
    ['a problem found before the calls is all there is to say', { blocked: f }, f],
  ])('%s', (_, extra, failure) => {
    const d = blocked.apply(platformCase(release(), extra));
    expect(d?.failure).toEqual(failure);
    if (d) {
      expect(d.action).toEqual({ kind: 'none' });
      expect(d.events).toEqual([{ type: 'Warning', reason: 'SecretNotFound', note: f.message }]);
    }
  });
});

describe('deleting', () => {
  it.each([
    ['not being deleted', undefined, undefined],
    ['being deleted: nothing to do, status as found', '2026-11-22T11:00:00Z', { kind: 'none' }],
  ])('%s', (_, deletionTimestamp, action) => {
    const r = release({ status: servingV1() });
    const d = deleting.apply({ o: observed({ ...r, metadata: { ...r.metadata, deletionTimestamp } }) });
    expect(d?.action).toEqual(action);
    if (d) expect(d.status).toEqual(servingV1());
  });
});

describe('suspended', () => {
  it.each([
    ['not suspended', false, undefined],
    ['suspended: the spec is seen, nothing is under way', true, 2],
  ])('%s', (_, suspend, observedGeneration) => {
    const reconciling = {
      type: 'Reconciling',
      status: 'True' as const,
      reason: 'Exporting',
      message: 'm',
      lastTransitionTime: at(-1),
    };
    const r = release({
      spec: { suspend },
      generation: 2,
      status: { ...servingV1(), conditions: [reconciling] },
    });
    const rule = suspended.apply({ o: observed(r) });
    // As written: its conditions are derived at commit.
    const d = rule && committed(r, rule, NOW);
    expect(d?.status.observedGeneration).toBe(observedGeneration);
    if (d) {
      expect(d.action).toEqual({ kind: 'none' });
      expect(d.status.conditions).toEqual([]);
    }
  });
});
