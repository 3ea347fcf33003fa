// When `trigger --wait` is done: the request handled, its export finished, and Ready then.
import { describe, expect, it } from 'vitest';
import { STALLED_GRACE_MS, triggerOutcome } from '../../../src/cli/trigger-outcome.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { failingRelease, servedRelease, VERSION } from '../../support/fixtures/release-status-fixtures.ts';

const AT = '2026-01-01T00:10:00.000Z';
type Status = NonNullable<StaticExportRelease['status']>;
const withStatus = (r: StaticExportRelease, over: Partial<Status>) => {
  r.status = { ...(r.status as Status), ...over };
  return r;
};

describe('triggerOutcome', () => {
  it('waits until the operator handled this request (or a later one)', () => {
    expect(triggerOutcome(servedRelease('d', 'd'), AT, 0)).toEqual({
      done: false,
      waitingFor: 'the operator to start the export',
    });
    const older = withStatus(servedRelease('d', 'd'), { lastHandledRequestedAt: '2026-01-01T00:09:59.000Z' });
    expect(triggerOutcome(older, AT, 0).done).toBe(false);
    const later = withStatus(servedRelease('d', 'd'), { lastHandledRequestedAt: '2026-01-01T00:10:01.000Z' });
    expect(triggerOutcome(later, AT, 0)).toEqual({ done: true, ok: true, version: VERSION });
  });

  it('waits while the export it started runs, then says the version published', () => {
    const running = withStatus(servedRelease('d', 'd'), {
      lastHandledRequestedAt: AT,
      export: { jobId: 'se_1', state: 'running', progress: 42.4 },
    });
    expect(triggerOutcome(running, AT, 0)).toEqual({ done: false, waitingFor: 'the export (42%)' });
    const done = withStatus(servedRelease('d', 'd'), {
      lastHandledRequestedAt: AT,
      export: { jobId: 'se_1', state: 'completed', finishedAt: '2026-01-01T00:11:00Z' },
    });
    expect(triggerOutcome(done, AT, 0)).toEqual({ done: true, ok: true, version: VERSION });
  });

  it('waits for a rollout under way (Reconciling)', () => {
    const r = withStatus(servedRelease('d', 'd'), { lastHandledRequestedAt: AT });
    r.status?.conditions?.push({
      type: 'Reconciling',
      status: 'True',
      reason: 'RollingOut',
      message: 'Rolling out',
      lastTransitionTime: AT,
    });
    expect(triggerOutcome(r, AT, 0)).toEqual({ done: false, waitingFor: 'the rollout' });
  });

  it("fails with Ready's reason and message once the requested export ended badly", () => {
    const failed = withStatus(failingRelease('d', 'd', 'ExportFailed', 'The export job failed: boom'), {
      lastHandledRequestedAt: AT,
      export: { jobId: 'se_1', state: 'failed', finishedAt: '2026-01-01T00:11:00Z' },
    });
    expect(triggerOutcome(failed, AT, 0)).toEqual({
      done: true,
      ok: false,
      reason: 'ExportFailed',
      message: 'The export job failed: boom',
    });
  });

  it('fails a release that stays Stalled past the grace period without handling the request', () => {
    const stalled = failingRelease('d', 'd', 'AuthenticationFailed', 'The admin API refused the key');
    expect(triggerOutcome(stalled, AT, STALLED_GRACE_MS - 1).done).toBe(false);
    expect(triggerOutcome(stalled, AT, STALLED_GRACE_MS)).toEqual({
      done: true,
      ok: false,
      reason: 'AuthenticationFailed',
      message: 'The admin API refused the key',
    });
    // A stalled rollout does not keep an export from starting.
    const rollout = failingRelease('d', 'd', 'RolloutStalled', 'Deployment/site has not rolled out');
    expect(triggerOutcome(rollout, AT, STALLED_GRACE_MS).done).toBe(false);
  });

  it('fails a suspended release at once', () => {
    const r = servedRelease('d', 'd');
    r.spec.suspend = true;
    expect(triggerOutcome(r, AT, 0)).toMatchObject({ done: true, ok: false, reason: 'Suspended' });
  });
});
