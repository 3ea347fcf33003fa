// A start whose call the per-minute request limiter defers was never sent: the hourly start budget
// gives its slot back (a reservation, released by the reconcile skeleton), so the group's count
// is the starts the platform saw, and no release waits for a slot a start never used.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease } from '../../support/cluster/resources.ts';

const LIMIT = 3;
const SITES = 5;
const project = (n: number) => `6520f3a1c9b1a20012af${String(n).padStart(4, '0')}`;
const h = useOperatorSuite({
  namespaces: ['reservation'],
  sim: { apiRevision: 2, exportDurationMs: 300, requestsPerMinute: LIMIT },
  operator: { apiRequestsPerMinute: LIMIT },
  // Reconciles waiting for a request slot: abort them rather than wait out the drain.
  drainMs: 0,
});

const starts = () => h.sim.requests.filter((r) => r.endpoint === 'start');
const reconciling = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Reconciling');
const remaining = async () => {
  const text = await h.operator.metrics.registry.getSingleMetricAsString(
    'static_export_start_budget_remaining',
  );
  const line = text.split('\n').find((l) => l.startsWith('static_export_start_budget_remaining{'));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
};

describe('a start deferred by the per-minute limit', () => {
  it('keeps no slot of the hourly budget: the count is the starts sent', async () => {
    for (let n = 0; n < SITES; n++)
      await applyRelease(h.ns, `site-${n}`, { domain: undefined, projectId: project(n) });
    // The minute's requests are spent and the other starts were decided and deferred.
    await eventually('the limit used up', async () => h.sim.requests.length >= LIMIT);
    await new Promise((r) => setTimeout(r, 3_000));
    const sent = starts().length;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(SITES);
    expect(await remaining()).toBe(10 - sent);
    const all = await Promise.all([...Array(SITES).keys()].map((n) => getRelease(h.ns, `site-${n}`)));
    expect(all.filter((r) => reconciling(r)?.reason === 'WaitingForStartBudget')).toEqual([]);
    // Nothing marked as started for a call never sent (a crash would leave its outcome in doubt).
    expect(all.filter((r) => r.status?.start !== undefined).length).toBeLessThanOrEqual(sent);
  });
});
