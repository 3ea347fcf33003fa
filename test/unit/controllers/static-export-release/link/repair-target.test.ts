import { describe, expect, it } from 'vitest';
import { repairTarget } from '../../../../../src/controllers/static-export-release/link/repair-target.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { platformCase, release, servingV1 } from '../../../../support/fixtures/release-fixtures.ts';

describe('repairTarget', () => {
  it.each<[string, Status, boolean, object | undefined]>([
    ['the target holds the served version', servingV1(), false, undefined],
    [
      'the target drifted: written again with a fresh link',
      servingV1(),
      true,
      { kind: 'publish', mode: 'Repair', jobId: 'se_1' },
    ],
    ['nothing served: nothing to repair', {}, true, undefined],
  ])('%s', (_, status, targetDrifted, action) => {
    expect(repairTarget.apply(platformCase(release({ status }), { targetDrifted }))?.action).toEqual(action);
  });
});
