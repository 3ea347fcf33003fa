// A roll's outcome, folded (pure): the rollout shows at once and is watched on soon.
import { describe, expect, it } from 'vitest';
import { foldRoll } from '../../../../../src/controllers/static-export-release/rollout/roll-workloads.ts';
import { VERSION_ANNOTATION } from '../../../../../src/targets/values-secret.ts';
import { NOW, release, servingV1, V2 } from '../../../../support/fixtures/release-fixtures.ts';

describe('foldRoll', () => {
  it('records the rollout under way in status.current, keeps the rest, and looks again in a second', () => {
    const status = servingV1();
    const step = foldRoll(
      release({ status }),
      {
        kind: 'roll',
        reason: 'NewVersion',
        workloads: [{ kind: 'Deployment', name: 'site' }],
        annotations: { [VERSION_ANNOTATION]: V2 },
      },
      [{ kind: 'Deployment', name: 'site', generation: 3 }],
      NOW,
    );
    expect(step).toMatchObject({ kind: 'commit', requeueAfterMs: 1_000, events: [{ reason: 'RollingOut' }] });
    if (step.kind !== 'commit') return;
    expect(step.status.history).toEqual(status.history);
    expect(step.status.current).toMatchObject({
      version: status.current?.version,
      rollout: { version: V2, workloads: [{ kind: 'Deployment', name: 'site', generation: 3 }] },
    });
  });
});
