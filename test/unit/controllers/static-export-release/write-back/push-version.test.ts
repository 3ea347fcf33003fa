// A write-back's outcome, folded (pure): recorded in GitWriteBack, never in Ready.
import { describe, expect, it } from 'vitest';
import { foldWriteBack } from '../../../../../src/controllers/static-export-release/write-back/push-version.ts';
import { GIT_WRITE_BACK } from '../../../../../src/controllers/static-export-release/write-back/write-back.ts';
import { NOW, release, servingV1, V1 } from '../../../../support/fixtures/release-fixtures.ts';

const GIT = { url: 'https://git.example.com/acme/gitops.git', path: 'sites/docs/values.yaml' };
const snapshot = () => ({ now: NOW, release: release({ spec: { gitWriteBack: GIT }, status: servingV1() }) });

describe('foldWriteBack', () => {
  it('committed: the commit is recorded with where it went, told by an event, the ladder looked at again', () => {
    const step = foldWriteBack(snapshot(), {
      kind: 'written',
      outcome: { outcome: 'Committed', commit: 'abc123', branch: 'main', attempts: 1 },
    });
    expect(step).toMatchObject({ kind: 'commit', requeueAfterMs: 0, events: [{ reason: 'Committed' }] });
    if (step.kind === 'commit')
      expect(step.status.current).toMatchObject({ version: V1, gitCommit: 'abc123' });
  });

  it('failed: a GitWriteBack condition and a Warning, retried by its own rule, Ready untouched', () => {
    const step = foldWriteBack(snapshot(), {
      kind: 'failed',
      reason: 'GitAuthRefused',
      message: 'the remote refused the credentials',
    });
    expect(step).toMatchObject({ kind: 'commit', retryAs: { reason: 'GitAuthRefused', stalled: true } });
    if (step.kind !== 'commit') return;
    expect(step.status.conditions).toMatchObject([
      { type: GIT_WRITE_BACK, status: 'False', reason: 'GitAuthRefused' },
    ]);
    expect(step.events).toMatchObject([{ type: 'Warning', reason: 'GitAuthRefused' }]);
  });
});
