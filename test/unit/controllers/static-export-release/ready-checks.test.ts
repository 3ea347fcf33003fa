import { describe, expect, it } from 'vitest';
import { readyCondition } from '../../../../src/controllers/static-export-release/release-conditions.ts';
import type { Status } from '../../../../src/controllers/static-export-release/release-model.ts';
import { at, release, servingV1 } from '../../../support/fixtures/release-fixtures.ts';

const failedExport = {
  jobId: 'se_2',
  state: 'failed',
  startedAt: at(-2_000),
  finishedAt: at(-1_000),
  message: 'Export job se_2 failed',
};
const stalled = { version: 'v', startedAt: at(-1_000), workloads: [], stalled: 'Deployment/web: crash loop' };

describe('Ready: the first check that has something to say', () => {
  it.each<[string, Status, string, string]>([
    ['nothing yet', {}, 'False', 'Exporting'],
    ['serving', servingV1(), 'True', 'Published'],
    ['a stalled rollout wins over serving', servingV1({}, { rollout: stalled }), 'False', 'RolloutStalled'],
    [
      'a refused export wins over a stalled rollout',
      servingV1({ publishGateFailure: 'only 1 pages' }, { rollout: stalled }),
      'False',
      'PublishGateFailed',
    ],
    [
      'a refused image',
      {
        ...servingV1(),
        oci: { digest: 'sha256:2', rejected: { digest: 'sha256:2', message: 'only 1 pages' } },
      },
      'False',
      'PublishGateFailed',
    ],
    [
      'a failed export wins over all',
      { ...servingV1({ publishGateFailure: 'x' }), export: failedExport },
      'False',
      'ExportFailed',
    ],
  ])('%s', (_, status, want, reason) => {
    expect(readyCondition(release({ status }), status)).toMatchObject({
      type: 'Ready',
      status: want,
      reason,
    });
  });
});
