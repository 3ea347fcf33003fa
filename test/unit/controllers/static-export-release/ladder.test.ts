// The order of each source's rules is the behaviour (which wins when several apply): pinned here by
// name, as the debug log names the rule that chose (`rule=…`).
import { describe, expect, it } from 'vitest';
import { failure } from '../../../../src/controllers/failures.ts';
import {
  choose,
  PLATFORM_RULES,
  REGISTRY_RULES,
} from '../../../../src/controllers/static-export-release/decide-release.ts';
import { at, MIN, observed, release, servingV1 } from '../../../support/fixtures/release-fixtures.ts';
import { ociRelease } from './registry/oci-fixtures.ts';

describe('the ladder', () => {
  it('of the platform: deleted, suspended, a start in doubt, a problem, the export in flight, a pin, a new export, renewal, repair', () => {
    expect(PLATFORM_RULES.map((r) => r.name)).toEqual([
      'deleting',
      'suspended',
      'startOutcomeUnknown',
      'blocked',
      'exportInFlight',
      'pinnedVersion',
      'joinOrStart',
      'renewLink',
      'repairTarget',
    ]);
  });

  it('of a registry: deleted, suspended, a problem, a failed check, a new digest, a drifted target', () => {
    expect(REGISTRY_RULES.map((r) => r.name)).toEqual([
      'deleting',
      'suspended',
      'blocked',
      'ociCheckFailed',
      'ociNewDigest',
      'ociRewrite',
    ]);
  });

  it.each([
    [
      'a start in doubt wins over a problem found',
      { start: { phase: 'Starting' as const, since: at(-MIN) } },
      true,
      'startOutcomeUnknown',
    ],
    ['a problem found wins over renewal', servingV1({}, { renewalTime: at(-MIN) }), true, 'blocked'],
    ['renewal when nothing else is due', servingV1({}, { renewalTime: at(-MIN) }), false, 'renewLink'],
    ['the foot when nothing applies', servingV1(), false, 'settle'],
  ])('names the rule that chose: %s', (_, status, isBlocked, rule) => {
    const blocked = isBlocked ? { blocked: failure('SecretNotFound', 'no Secret', true) } : {};
    expect(
      choose(observed(release({ status }), { targetDrifted: false, workloads: [], ...blocked })).rule,
    ).toBe(rule);
  });

  it('names the foot of a registry release with nothing to do', () => {
    expect(choose(observed(ociRelease(), { targetDrifted: false, workloads: [] })).rule).toBe('settle');
  });
});
