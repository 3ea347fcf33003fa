// A registry-source release for the registry rules' tests.
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { at, MIN, release } from '../../../../support/fixtures/release-fixtures.ts';

export const REPO = 'registry.internal:5000/docs/site';
export const D1 = `sha256:${'1'.repeat(64)}`;
export const D2 = `sha256:${'2'.repeat(64)}`;

/** Following REPO; serving D1 unless `status` says otherwise. */
export const ociRelease = (status: Status = servingD1, generation = 1) =>
  release({
    base: { target: { valuesSecret: { name: 'values' } } },
    spec: { source: { oci: { repository: REPO, interval: '5m' } } },
    status,
    generation,
  });

export const servingD1: Status = {
  observedGeneration: 1,
  oci: { digest: D1, checkedAt: at(-MIN) },
  current: { version: `${REPO}@${D1}`, contentVersion: `sha256-${'a'.repeat(64)}`, appliedAt: at(-10 * MIN) },
};
