import { describe, expect, it } from 'vitest';
import { nextStep, versionsToRemove } from '../../../src/sync/plan.ts';

describe('sync plan', () => {
  const kept = (...versions: string[]) => versions.map((version, i) => ({ version, servedAt: 100 - i }));
  it('serves, swaps a kept version, or fetches', () => {
    expect(nextStep('v1', kept('v1'), 'v1')).toEqual({ kind: 'serving' });
    expect(nextStep('v2', kept('v2', 'v1'), 'v1')).toEqual({ kind: 'swap', version: 'v1' });
    expect(nextStep(undefined, [], 'v1')).toEqual({ kind: 'fetch', version: 'v1' });
  });
  it('removes the least recently served beyond keep, never the served one', () => {
    expect(versionsToRemove(kept('v3', 'v2', 'v1'), 'v3', 2)).toEqual(['v1']);
    expect(versionsToRemove(kept('v3', 'v2', 'v1'), 'v1', 1)).toEqual(['v3', 'v2']);
    expect(versionsToRemove(kept('v2', 'v1'), 'v2', 3)).toEqual([]);
  });
});
