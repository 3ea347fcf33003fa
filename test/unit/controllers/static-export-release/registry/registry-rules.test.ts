import { describe, expect, it } from 'vitest';
import { failure } from '../../../../../src/controllers/failures.ts';
import {
  ociCheckFailed,
  ociNewDigest,
  ociRewrite,
} from '../../../../../src/controllers/static-export-release/registry/registry-rules.ts';
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

describe('ociCheckFailed', () => {
  it.each<[string, OciCheck | undefined, number | undefined]>([
    ['no check due', undefined, undefined],
    ['the tag resolved', { kind: 'resolved', digest: D1 }, undefined],
    [
      'failed: retried by the next check at the latest',
      { kind: 'failed', failure: failure('ImageNotFound', 'gone', true, 60 * 60_000) },
      5 * 60_000,
    ],
    [
      'failed with backoff: stays so',
      { kind: 'failed', failure: failure('RegistryUnavailable', 'down', false) },
      undefined,
    ],
  ])('%s', (_, check, retryAfterMs) => {
    const d = ociCheckFailed.apply(registryCase(ociRelease(), check ? { check } : {}));
    expect(d?.failure?.reason).toBe(check?.kind === 'failed' ? check.failure.reason : undefined);
    expect(d?.failure?.retryAfterMs).toBe(retryAfterMs);
  });
});

describe('ociRewrite', () => {
  it.each<[string, Status, boolean, object | undefined]>([
    ['the target holds the served reference', servingD1, false, undefined],
    ['the target drifted: written again', servingD1, true, { kind: 'rewrite' }],
    ['nothing served: nothing to write', {}, true, undefined],
  ])('%s', (_, status, targetDrifted, action) => {
    expect(ociRewrite.apply(registryCase(ociRelease(status), { targetDrifted }))?.action).toEqual(action);
  });
});
