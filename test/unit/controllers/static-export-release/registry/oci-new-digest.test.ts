import { describe, expect, it } from 'vitest';
import { ociNewDigest } from '../../../../../src/controllers/static-export-release/registry/oci-new-digest.ts';
import type { OciCheck, Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { registryCase } from '../../../../support/fixtures/release-fixtures.ts';
import { D1, D2, ociRelease, servingD1 } from './oci-fixtures.ts';

const refusedD2: Status = {
  ...servingD1,
  oci: {
    digest: D2,
    checkedAt: servingD1.oci?.checkedAt,
    rejected: { digest: D2, generation: 1, message: 'only 1 pages' },
  },
};

describe('ociNewDigest', () => {
  it.each<[string, Status, OciCheck | undefined, object | undefined]>([
    ['no check due', servingD1, undefined, undefined],
    ['the served digest', servingD1, { kind: 'resolved', digest: D1 }, undefined],
    ['a new digest: pulled', servingD1, { kind: 'resolved', digest: D2 }, { kind: 'pull', digest: D2 }],
    [
      'a digest refused under this spec: not pulled again',
      refusedD2,
      { kind: 'resolved', digest: D2 },
      undefined,
    ],
  ])('%s', (_, status, check, action) => {
    expect(ociNewDigest.apply(registryCase(ociRelease(status), check ? { check } : {}))?.action).toEqual(
      action,
    );
  });
});
