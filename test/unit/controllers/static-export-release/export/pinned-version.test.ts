import { describe, expect, it } from 'vitest';
import { pinnedVersion } from '../../../../../src/controllers/static-export-release/export/pinned-version.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { platformCase, release, servingV1, V1, V2 } from '../../../../support/fixtures/release-fixtures.ts';

/** Serving V2 from se_2, with V1 (se_1) in history. */
const servingV2: Status = {
  ...servingV1(),
  current: { ...servingV1().current, version: V2, jobId: 'se_2' },
};

describe('pinnedVersion', () => {
  it.each<[string, string | undefined, Status, object | undefined, string | undefined]>([
    ['no pin', undefined, servingV1(), undefined, undefined],
    ['pinned to the version served', V1, servingV1(), undefined, undefined],
    [
      'pinned to one in history: published again',
      V1,
      servingV2,
      { kind: 'publish', mode: 'Pin', jobId: 'se_1', expectVersion: V1 },
      undefined,
    ],
    [
      'pinned to one history does not know: refused',
      V2,
      servingV1(),
      { kind: 'none' },
      'PinnedVersionUnknown',
    ],
  ])('%s', (_, pin, status, action, failure) => {
    const spec = pin === undefined ? {} : { pinnedVersion: pin };
    const d = pinnedVersion.apply(platformCase(release({ spec, generation: 2, status })));
    expect(d?.action).toEqual(action);
    expect(d?.failure?.reason).toBe(failure);
    // The pin is this generation's whole spec change: seen.
    if (d) expect(d.status.observedGeneration).toBe(2);
  });
});
