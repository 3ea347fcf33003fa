import { describe, expect, it } from 'vitest';
import { failure } from '../../../../../src/controllers/failures.ts';
import { ociCheckFailed } from '../../../../../src/controllers/static-export-release/registry/oci-check-failed.ts';
import type { OciCheck } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { registryCase } from '../../../../support/fixtures/release-fixtures.ts';
import { D1, ociRelease } from './oci-fixtures.ts';

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
