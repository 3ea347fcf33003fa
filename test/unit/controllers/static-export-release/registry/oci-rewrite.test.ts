import { describe, expect, it } from 'vitest';
import { ociRewrite } from '../../../../../src/controllers/static-export-release/registry/oci-rewrite.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { registryCase } from '../../../../support/fixtures/release-fixtures.ts';
import { ociRelease, servingD1 } from './oci-fixtures.ts';

describe('ociRewrite', () => {
  it.each<[string, Status, boolean, object | undefined]>([
    ['the target holds the served reference', servingD1, false, undefined],
    ['the target drifted: written again', servingD1, true, { kind: 'rewrite' }],
    ['nothing served: nothing to write', {}, true, undefined],
  ])('%s', (_, status, targetDrifted, action) => {
    expect(ociRewrite.apply(registryCase(ociRelease(status), { targetDrifted }))?.action).toEqual(action);
  });
});
