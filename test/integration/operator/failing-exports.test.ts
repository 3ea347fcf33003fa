// A site whose exports keep failing backs off instead of spending a start every few minutes (the
// count in status survives a restart), and a job the platform never ends times out and the release
// moves on. Real control plane, the operator in this process, the simulator through the production
// client; the delays scaled down by the operator's tunables (5 min → 2 s, 2 h → 4 s).
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventsFor } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, untilRelease } from '../../support/cluster/resources.ts';

const RETRY_MS = 2_000;
const h = useOperatorSuite({
  namespaces: ['failing'],
  sim: { exportDurationMs: 300 },
  operator: { tunables: { exportRetryMs: RETRY_MS, exportDeadlineMs: 4_000, exportDeadlineFloorMs: 4_000 } },
});

const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');
/** When the simulator got each start since `mark` (its clock is the machine's). */
const startTimes = (mark: number) =>
  h.sim.requests
    .slice(mark)
    .filter((r) => r.endpoint === 'start')
    .map((r) => r.time);

describe('an export that fails again and again', () => {
  it('is retried after 2, 4, 8 … units, not every unit; a restarted operator keeps the count', async () => {
    const mark = h.sim.requests.length;
    // The simulator fails every export of a domain starting with "fail.".
    await applyRelease(h.ns, 'broken', { domain: 'fail.backoff.example.com' });
    const third = await untilRelease(
      h.ns,
      'broken',
      'three failures',
      (r) => (r.status?.exportFailures ?? 0) >= 3 && Boolean(r.status?.export?.finishedAt),
      30_000,
    );
    expect(readyOf(third)).toMatchObject({ status: 'False', reason: 'ExportFailed' });
    expect(readyOf(third)?.message).toMatch(/; tried again at .* \(3 in a row without a publish/);
    const [first = 0, second = 0, thirdStart = 0] = startTimes(mark);
    expect(startTimes(mark)).toHaveLength(3);
    // Each wait doubles: 2 s after the first failure, 4 s after the second (each export ~0.3 s).
    expect(second - first).toBeGreaterThanOrEqual(RETRY_MS);
    expect(thirdStart - second).toBeGreaterThanOrEqual(2 * RETRY_MS);

    // A new leader reads the count from status: the fourth start waits 8 s after the third failure.
    await h.restartOperator(0);
    const failedAt = Date.parse(third.status?.export?.finishedAt ?? '');
    await untilRelease(h.ns, 'broken', 'a fourth start', () => startTimes(mark).length >= 4, 20_000);
    expect((startTimes(mark)[3] ?? 0) - failedAt).toBeGreaterThanOrEqual(4 * RETRY_MS - 100);
  });

  it('a job that never ends times out (ExportTimedOut), and the release moves on to a new export', async () => {
    h.sim.configure({ exportDurationMs: 600_000 });
    const mark = h.sim.requests.length;
    try {
      await applyRelease(h.ns, 'endless', { domain: 'endless.example.com' });
      const timedOut = await untilRelease(
        h.ns,
        'endless',
        'ExportTimedOut',
        (r) => readyOf(r)?.reason === 'ExportTimedOut',
        20_000,
      );
      expect(timedOut.status?.export?.state).toBe('timedOut');
      expect(timedOut.status?.exportFailures).toBe(1);
      expect(readyOf(timedOut)?.message).toMatch(
        /did not finish within 4s \(the platform still reports it (queued|running)\)/,
      );
      expect((await eventsFor(h.ns, 'endless')).map((e) => e.reason)).toContain('ExportTimedOut');
      // No longer polled for ever: the retry starts a new job.
      h.sim.configure({ exportDurationMs: 300 });
    } finally {
      h.sim.configure({ exportDurationMs: 300 });
    }
    const published = await untilRelease(
      h.ns,
      'endless',
      'published',
      (r) => readyOf(r)?.reason === 'Published',
      20_000,
    );
    expect(startTimes(mark)).toHaveLength(2);
    expect(published.status?.exportFailures).toBeUndefined();
  });
});
