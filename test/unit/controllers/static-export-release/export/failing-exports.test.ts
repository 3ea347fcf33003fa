// A broken site must not eat its organization's hourly start budget, and a job the platform never
// ends must not hold a release for ever: the retry of a site serving nothing backs off with each
// export in a row that ends without a publish (the count in status, so a restart keeps it), and an
// export past its deadline counts as failed.
import { describe, expect, it } from 'vitest';
import * as exportFolds from '../../../../../src/controllers/static-export-release/export/publish-content.ts';
import * as startFolds from '../../../../../src/controllers/static-export-release/export/start-export.ts';
import {
  DEFAULT_TUNABLES,
  type Status,
} from '../../../../../src/controllers/static-export-release/release-model.ts';
import { startDemandIntervalMs } from '../../../../../src/controllers/static-export-release/schedule.ts';
import { decided as decide, folded } from '../../../../support/fixtures/committed.ts';
import { at, MIN, NOW, observed, release, V1, V2 } from '../../../../support/fixtures/release-fixtures.ts';

const afterPublish = folded(exportFolds.afterPublish);
const afterPublishGateFailed = folded(exportFolds.afterPublishGateFailed);
const afterStart = folded(startFolds.afterStart);
const HOUR = 60 * MIN;

const running = (startedAgoMs: number, extra: Status = {}): Status => ({
  ...extra,
  observedGeneration: 1,
  export: { jobId: 'se_2', state: 'running', progress: 10, startedAt: at(-startedAgoMs) },
});

const ready = (s: Status) => s.conditions?.find((c) => c.type === 'Ready');

/**
 * A site whose every export fails, nothing served, over `hours`: each start's time (minutes from
 * the first), as decide() and the start's fold chain them (jobs fail a minute after they start).
 */
function brokenSite(spec: object, hours: number): number[] {
  let r = release({ spec });
  let now = NOW;
  const starts: number[] = [];
  while (now.getTime() < NOW.getTime() + hours * HOUR) {
    const d = decide({ source: 'platform', now, release: r });
    if (d.action.kind === 'start') {
      starts.push((now.getTime() - NOW.getTime()) / MIN);
      r = {
        ...r,
        status: afterStart({ now, release: { ...r, status: d.status } }, `se_${starts.length}`, 'queued')
          .status,
      };
      now = new Date(now.getTime() + MIN);
      const failed = decide({
        source: 'platform',
        now,
        release: r,
        poll: { kind: 'job', state: 'failed', error: 'the site failed to build' },
      });
      r = { ...r, status: failed.status };
      continue;
    }
    expect(d.requeueAfterMs, 'a release serving nothing looks again on its own').toBeGreaterThan(0);
    now = new Date(now.getTime() + (d.requeueAfterMs ?? HOUR));
  }
  return starts;
}

describe('a site whose exports keep failing, serving nothing', () => {
  it('waits 5 minutes after the first failure, doubled for each failure in a row, at most an hour', () => {
    // Each start 1 minute of export plus the wait: 5, 10, 20, 40, 60, 60 … after the failures.
    expect(brokenSite({}, 6)).toEqual([0, 6, 17, 38, 79, 140, 201, 262, 323]);
  });

  it('spends at most a few starts an hour once backed off (12 an hour before)', () => {
    const starts = brokenSite({}, 6);
    const lastHour = starts.filter((m) => m >= 5 * 60);
    expect(lastHour.length).toBeLessThanOrEqual(1);
  });

  it("backs off at most to the site's interval when that is shorter than an hour", () => {
    // The interval (15m) counts from a start: its end comes before the doubled retry.
    const starts = brokenSite({ interval: '15m' }, 2);
    const gaps = starts.slice(1).map((m, i) => m - (starts[i] ?? 0));
    expect(gaps.slice(0, 2)).toEqual([6, 11]);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(16);
  });

  it('keeps the count in status: a restarted operator waits as long as the one before', () => {
    const r = release({
      status: {
        observedGeneration: 1,
        exportFailures: 4,
        export: { jobId: 'se_4', state: 'failed', startedAt: at(-41 * MIN), finishedAt: at(-40 * MIN) },
      },
    });
    // 5 × 2³ = 40 minutes after it failed: now.
    expect(decide(observed(r)).action).toEqual({ kind: 'start', reason: 'Retry' });
    const early = decide({ source: 'platform', now: new Date(NOW.getTime() - MIN), release: r });
    expect(early.action).toEqual({ kind: 'none' });
    expect(early.requeueAfterMs).toBe(MIN);
  });

  it("counts the publish gate's refusals the same, and a publish clears the count", () => {
    const r = release({ status: running(2 * MIN, { exportFailures: 1 }) });
    const refused = afterPublishGateFailed(observed(r), {
      jobId: 'se_2',
      version: V2,
      message: 'it has 0 pages, fewer than the minimum of 1',
    });
    expect(refused.status.exportFailures).toBe(2);
    expect(refused.requeueAfterMs).toBe(10 * MIN);
    const published = afterPublish(observed(release({ status: refused.status })), {
      mode: 'NewContent',
      jobId: 'se_3',
      version: V1,
      expiresAt: new Date(NOW.getTime() + HOUR),
      wrote: true,
    });
    expect(published.status.exportFailures).toBeUndefined();
  });

  it("gives the start budget the demand of its retries, not only its interval's", () => {
    const failing = (exportFailures: number, spec: object = {}) =>
      release({
        spec,
        status: {
          exportFailures,
          export: { jobId: 'se_1', state: 'failed', startedAt: at(-2 * MIN), finishedAt: at(-MIN) },
        },
      });
    expect(startDemandIntervalMs(failing(1), DEFAULT_TUNABLES)).toBe(5 * MIN);
    expect(startDemandIntervalMs(failing(3, { interval: '6h' }), DEFAULT_TUNABLES)).toBe(20 * MIN);
    expect(startDemandIntervalMs(failing(9, { interval: '6h' }), DEFAULT_TUNABLES)).toBe(HOUR);
    // Serving something, a failure waits for the interval: that is its demand.
    const serving = release({
      spec: { interval: '6h' },
      status: { ...failing(3).status, current: { version: V1, jobId: 'se_0' } },
    });
    expect(startDemandIntervalMs(serving, DEFAULT_TUNABLES)).toBe(6 * HOUR);
  });
});

describe('an export that does not end', () => {
  const poll = (state: string) => ({ kind: 'job' as const, state });

  it.each(['running', 'queued', 'paused'])(
    'still %s after the default deadline (no duration recorded): ExportTimedOut, counted as failed, retried',
    (state) => {
      const r = release({ status: running(DEFAULT_TUNABLES.exportDeadlineMs) });
      const d = decide(observed(r, { poll: poll(state) }));
      expect(d.action).toEqual({ kind: 'none' });
      expect(d.status.export).toMatchObject({ state: 'timedOut', finishedAt: NOW.toISOString() });
      expect(d.status.exportFailures).toBe(1);
      expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'ExportTimedOut' });
      expect(ready(d.status)?.message).toMatch(
        new RegExp(`^Export job se_2 did not finish within 2h \\(the platform still reports it ${state}\\)`),
      );
      expect(d.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ExportTimedOut' })]);
      // The release moves on: no more polls of the job, the retry is due in 5 minutes.
      expect(d.requeueAfterMs).toBe(5 * MIN);
      const later = decide({
        source: 'platform',
        now: new Date(NOW.getTime() + 5 * MIN),
        release: { ...r, status: d.status },
      });
      expect(later.action).toEqual({ kind: 'start', reason: 'Retry' });
    },
  );

  it('is polled until then, and looked at again at the deadline at the latest', () => {
    const r = release({ status: running(DEFAULT_TUNABLES.exportDeadlineMs - 20_000) });
    const d = decide(observed(r, { poll: poll('running') }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.status.export?.state).toBe('running');
    expect(d.requeueAfterMs).toBeLessThanOrEqual(20_000);
  });

  it("with durations recorded: 4 times the site's median, never less than the floor", () => {
    // Median 20 min: the deadline is 80 min.
    const slow = { exportDurationsSeconds: [1_200, 1_500, 900] };
    expect(
      decide(observed(release({ status: running(79 * MIN, slow) }), { poll: poll('running') })).status.export
        ?.state,
    ).toBe('running');
    const over = decide(observed(release({ status: running(80 * MIN, slow) }), { poll: poll('running') }));
    expect(over.status.export?.state).toBe('timedOut');
    // Median 1 minute: 4 minutes would be too tight; the floor (30 min) holds.
    const quick = { exportDurationsSeconds: [60, 60, 60] };
    expect(
      decide(observed(release({ status: running(29 * MIN, quick) }), { poll: poll('running') })).status.export
        ?.state,
    ).toBe('running');
    expect(
      decide(observed(release({ status: running(30 * MIN, quick) }), { poll: poll('running') })).status.export
        ?.state,
    ).toBe('timedOut');
  });

  it('while a version is served, the next export waits for the interval as after a failure', () => {
    const served = { current: { version: V1, jobId: 'se_1', renewalTime: at(3 * HOUR) } };
    const r = release({ spec: { interval: '6h' }, status: running(2 * HOUR, served) });
    const d = decide(observed(r, { poll: poll('running') }));
    expect(d.status.export?.state).toBe('timedOut');
    expect(ready(d.status)?.reason).toBe('ExportTimedOut');
    expect(d.requeueAfterMs).toBe(4 * HOUR);
  });
});
