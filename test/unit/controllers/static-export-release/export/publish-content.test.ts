// A publish's outcome, folded (pure): published (or found served already), or refused by the gate.
import { describe, expect, it } from 'vitest';
import { foldContent } from '../../../../../src/controllers/static-export-release/export/publish-content.ts';
import { MIN, NOW, release, servingV1, V1, V2 } from '../../../../support/fixtures/release-fixtures.ts';

const snapshot = () => ({ now: NOW, release: release({ status: servingV1() }) });

describe('foldContent', () => {
  it('new content published: served from now on, first in history, the workloads looked at next', () => {
    const step = foldContent(snapshot(), {
      kind: 'published',
      mode: 'NewContent',
      jobId: 'se_2',
      version: V2,
      expiresAt: new Date(NOW.getTime() + 60 * MIN),
      wrote: true,
      pageCount: 12,
    });
    expect(step).toMatchObject({ kind: 'commit', requeueAfterMs: 0, events: [{ reason: 'Published' }] });
    if (step.kind !== 'commit') return;
    expect(step.status.current).toMatchObject({ version: V2, jobId: 'se_2', pageCount: 12 });
    expect(step.status.history?.map((h) => h.version)).toEqual([V2, V1]);
  });

  it('refused by the gate: nothing served changes, the export counts as handled and failed', () => {
    const step = foldContent(snapshot(), {
      kind: 'gateRefused',
      jobId: 'se_2',
      version: V2,
      message: 'no index page',
    });
    expect(step).toMatchObject({
      kind: 'commit',
      events: [{ type: 'Warning', reason: 'PublishGateFailed' }],
    });
    if (step.kind !== 'commit') return;
    expect(step.status.current?.version).toBe(V1);
    expect(step.status.exportFailures).toBe(1);
    expect(step.status.export?.publishGateFailure).toBe('no index page');
  });
});
