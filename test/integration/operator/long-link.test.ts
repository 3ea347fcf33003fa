// A bundle link that lives for weeks: its renewal is more than 24.8 days away, longer than a Node
// timer holds. The release must wait for it, not reconcile again and again.
import { describe, expect, it } from 'vitest';
import { eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease } from '../../support/cluster/resources.ts';

const DAY_S = 86_400;
const h = useOperatorSuite({ namespaces: ['long-link'], sim: { linkTtlSeconds: 37 * DAY_S } });

const reconciles = () => h.logs.filter((l) => l.includes('"decided"') && l.includes(`${h.ns}/weeks`)).length;

describe('a link valid for 37 days', () => {
  it('is published with its renewal weeks away, and the release then rests until it', async () => {
    await applyRelease(h.ns, 'weeks', { renewBefore: '1h' });
    const ready = await eventually('weeks: Ready', async () => {
      const r = await getRelease(h.ns, 'weeks');
      return r.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? r : undefined;
    });
    const renewalInDays =
      (Date.parse(ready.status?.current?.renewalTime ?? '') - Date.now()) / (DAY_S * 1000);
    expect(renewalInDays).toBeGreaterThan(36);

    await new Promise((r) => setTimeout(r, 1_000));
    const settled = reconciles();
    const calls = h.sim.requests.length;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(reconciles()).toBe(settled);
    expect(h.sim.requests.length).toBe(calls);
  });
});
