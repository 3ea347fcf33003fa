// The operator keeps under the admin API's per-minute request limit by waiting for a slot, so
// the platform never has to refuse it (VENDOR-FACTS: about 100 requests per minute, then 429).
import { describe, expect, it } from 'vitest';
import { eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyAgentJob, applyRelease, getAgentJob, getRelease } from '../../support/cluster/resources.ts';

const LIMIT = 4;
const h = useOperatorSuite({
  namespaces: ['request-limit'],
  sim: { exportDurationMs: 0, requestsPerMinute: LIMIT },
  operator: { apiRequestsPerMinute: LIMIT },
  // A reconcile is waiting for a slot: abort it rather than wait out the drain.
  drainMs: 0,
});

const adminCalls = () => h.sim.requests.filter((r) => r.endpoint !== 'download');

describe('per-minute admin API limit', () => {
  it('sends at most the limit in a minute and waits for the rest instead of drawing 429s', async () => {
    // Each release needs a start, a status poll and a bundle link: three releases need nine calls
    // (three sites: releases of one site would share their export and its calls).
    for (const name of ['one', 'two', 'three'])
      await applyRelease(h.ns, name, { domain: `${name}.example.com` });
    await eventually('the limit used up', async () => adminCalls().length >= LIMIT);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(adminCalls()).toHaveLength(LIMIT);
    expect(adminCalls().filter((r) => r.status === 429)).toEqual([]);
    const ready = await Promise.all(
      ['one', 'two', 'three'].map(async (n) =>
        (await getRelease(h.ns, n)).status?.conditions?.find((c) => c.type === 'Ready'),
      ),
    );
    // Waiting is not a failure: nothing says RateLimited.
    expect(ready.filter((c) => c?.reason === 'RateLimited')).toEqual([]);
    expect(ready.filter((c) => c?.status === 'True').length).toBeLessThan(3);
  });

  it('does not mark an AgentJob Creating while no request may be sent (a crash would leave it in doubt)', async () => {
    await applyAgentJob(h.ns, 'later', 'proj-limit', 'Fix a typo');
    const readyReason = async () =>
      (await getAgentJob(h.ns, 'later')).status?.conditions?.find((c) => c.type === 'Ready')?.reason;
    const reconciled = async () =>
      /controller="agentjob"/.test(
        await h.operator.metrics.registry.getSingleMetricAsString('static_export_reconcile_total'),
      );
    await eventually(
      'the AgentJob reconciled or marked Creating',
      async () => (await reconciled()) || (await readyReason()) === 'Creating',
    );
    expect(await readyReason()).not.toBe('Creating');
    expect(h.sim.agentJobsCreated('proj-limit')).toBe(0);
  });
});
