import { describe, expect, it } from 'vitest';
import { renewLink } from '../../../../../src/controllers/static-export-release/link/renew-link.ts';
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
