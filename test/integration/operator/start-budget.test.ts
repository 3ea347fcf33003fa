// The hourly start budget of the current export API, shared by every release of one admin key: the
// eleventh release waits for its slot instead of meeting the platform's 429, says so, shows in the
// metrics, and keeps waiting after a restart (the new operator counts the starts the releases
// recorded). Intervals that want more than 10 starts an hour are told once per group.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease } from '../../support/cluster/resources.ts';

const project = (n: number) => `6520f3a1c9b1a20012ac${String(n).padStart(4, '0')}`;
const SITES = 11;

const h = useOperatorSuite({ namespaces: ['budget'], sim: { apiRevision: 2, exportDurationMs: 300 } });

const name = (n: number) => `site-${n}`;
const reconciling = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Reconciling');
const metric = async (metricName: string) => {
  const text = await h.operator.metrics.registry.getSingleMetricAsString(metricName);
  return text.split('\n').find((l) => l.startsWith(`${metricName}{`));
};
const starts = () => h.sim.requests.filter((r) => r.endpoint === 'start');

describe('the shared start budget', () => {
  it('starts ten an hour, queues the eleventh with its slot, and never meets a 429, across a restart', async () => {
    // Every 30 minutes: 22 starts an hour wanted, more than 10.
    for (let n = 0; n < SITES; n++)
      await applyRelease(h.ns, name(n), { domain: undefined, projectId: project(n), interval: '30m' });
    const states = await eventually(
      'ten published, one waiting',
      async () => {
        const all = await Promise.all([...Array(SITES).keys()].map((n) => getRelease(h.ns, name(n))));
        const published = all.filter((r) => r.status?.current?.version);
        const waiting = all.filter((r) => reconciling(r)?.reason === 'WaitingForStartBudget');
        return published.length === 10 && waiting.length === 1 ? { waiting: waiting[0] } : undefined;
      },
      90_000,
    );
    const message = reconciling(states.waiting as StaticExportRelease)?.message ?? '';
    expect(message).toMatch(/has used 10 of its 10 export starts in the last hour; this release starts at /);
    expect(message).toMatch(/an interval of at least 66m for every site fits/);
    const slot = Date.parse(states.waiting?.status?.waiting?.until ?? '');
    expect(slot - Date.now()).toBeGreaterThan(55 * 60_000);
    expect(starts().map((r) => r.status)).toEqual(Array(10).fill(202));

    expect(await metric('static_export_start_budget_remaining')).toMatch(/ 0$/);
    expect(await metric('static_export_start_budget_waiting')).toMatch(/ 1$/);
    // Told once for the group, not once per release.
    const events = JSON.parse(
      await kubectlOk([
        'get',
        'events',
        '-n',
        h.ns,
        '--field-selector',
        'reason=StartBudgetOvercommitted',
        '-o',
        'json',
      ]),
    ) as { items: { series?: { count: number } }[] };
    expect(events.items).toHaveLength(1);
    expect(events.items[0]?.series).toBeUndefined();

    // A restarted operator counts the recorded starts: the waiting release still waits.
    await h.restartOperator();
    // A release created after the restart waits too: nothing tells the new operator of the ten
    // starts but the releases' status.
    await applyRelease(h.ns, 'late', { domain: undefined, projectId: project(99) });
    const late = await eventually('the late release waits', async () => {
      const r = await getRelease(h.ns, 'late');
      return reconciling(r)?.reason === 'WaitingForStartBudget' ? r : undefined;
    });
    expect(late.status?.export).toBeUndefined();
    const still = await getRelease(h.ns, states.waiting?.metadata.name ?? '');
    expect(reconciling(still)?.reason).toBe('WaitingForStartBudget');
    expect(starts().map((r) => r.status)).toEqual(Array(10).fill(202));
  });
});
