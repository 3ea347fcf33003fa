import { describe, expect, it } from 'vitest';
import { suspended } from '../../../../../src/controllers/static-export-release/common-rules/suspended.ts';
import { committed } from '../../../../support/fixtures/committed.ts';
import { at, NOW, observed, release, servingV1 } from '../../../../support/fixtures/release-fixtures.ts';

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
