// The platform's 429 on a start of the current export API, without Retry-After (the vendor
// documents none): another client of the same organization spent the hour, so the operator's own
// count could not know. The group waits, conservatively, and asks no second time: one refused start,
// across a restart of the operator too (the refused start and the hold are kept in status).
import { describe, expect, it } from 'vitest';
import { AdminApiClient } from '../../../src/api/index.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventsFor, eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease } from '../../support/cluster/resources.ts';

const project = (n: number) => `6520f3a1c9b1a20012ad${String(n).padStart(4, '0')}`;
const h = useOperatorSuite({
  namespaces: ['limit'],
  sim: { apiRevision: 2, exportDurationMs: 300, startLimitRetryAfter: false },
});
const reconciling = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Reconciling');

describe('the platform refusing a start (429)', () => {
  it('without Retry-After: the group waits the window out, one refused start, never a loop', async () => {
    // Another cluster of the same organization spends the hour's 10 starts.
    const other = new AdminApiClient({ baseUrl: h.sim.baseUrl, apiKey: h.sim.adminKey });
    for (let i = 0; i < 10; i++) await other.startExport({ projectId: project(100 + i) });
    await other.close();
    const p = project(1);
    await applyRelease(h.ns, 'limited', { domain: undefined, projectId: p });
    const r = await eventually('limited waits for the budget', async () => {
      const got = await getRelease(h.ns, 'limited');
      return reconciling(got)?.reason === 'WaitingForStartBudget' ? got : undefined;
    });
    expect(reconciling(r)?.message).toMatch(/429/);
    const events = await eventsFor(h.ns, 'limited');
    expect(events.find((e) => e.reason === 'RateLimited')?.note).toMatch(
      /more than 10 starts per organization in the last hour \(429\)/,
    );
    await new Promise((res) => setTimeout(res, 3_000));
    const starts = h.sim.requests.filter((q) => q.endpoint === 'start' && q.path.includes(p));
    expect(starts.map((q) => q.status)).toEqual([429]);
    // Conservative without Retry-After: not before the window's hour (none of its starts were ours).
    expect(Date.parse(r.status?.waiting?.until ?? '') - Date.now()).toBeGreaterThan(50 * 60_000);
    // The refused start and the hold are in status: a restarted operator (a new leader) holds the
    // group too, and asks no second time.
    expect(r.status?.recentStarts).toHaveLength(1);
    expect(r.status?.waiting?.refusedUntil).toBeDefined();
    await h.restartOperator();
    await applyRelease(h.ns, 'after-restart', { domain: undefined, projectId: project(2) });
    const late = await eventually('the release created after the restart waits', async () => {
      const got = await getRelease(h.ns, 'after-restart');
      return reconciling(got)?.reason === 'WaitingForStartBudget' ? got : undefined;
    });
    expect(late.status?.waiting?.refusedUntil).toBe(r.status?.waiting?.refusedUntil);
    await new Promise((res) => setTimeout(res, 3_000));
    const ours = h.sim.requests.filter(
      (q) => q.endpoint === 'start' && (q.path.includes(p) || q.path.includes(project(2))),
    );
    expect(ours.map((q) => q.status)).toEqual([429]);
  });
});
