import { describe, expect, it } from 'vitest';
import {
  renewLink,
  repairTarget,
} from '../../../../../src/controllers/static-export-release/link/link-rules.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { at, platformCase, release, servingV1 } from '../../../../support/fixtures/release-fixtures.ts';

describe('renewLink', () => {
  it.each([
    ['renewal still ahead', at(1), undefined],
    [
      'renewal time reached: a fresh link for the served job',
      at(0),
      { kind: 'publish', mode: 'Renew', jobId: 'se_1' },
    ],
  ])('%s', (_, renewalTime, action) => {
    const status = servingV1({}, { renewalTime });
    expect(renewLink.apply(platformCase(release({ status })))?.action).toEqual(action);
  });

  it('nothing served: nothing to renew', () => {
    expect(renewLink.apply(platformCase(release()))).toBeUndefined();
  });
});

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
