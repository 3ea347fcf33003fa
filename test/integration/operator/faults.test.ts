// Each class of admin API failure gives the condition a user can act on, and the release recovers
// once the cause is gone. Real control plane, simulator faults, production client.
import { describe, expect, it } from 'vitest';
import { eventsFor, eventually, kubectl } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, applySecret, getRelease, requestExport } from '../../support/cluster/resources.ts';

const NON_ENTERPRISE_KEY = 'mint_starterplan0000000000000000';
const h = useOperatorSuite({
  namespaces: ['faults'],
  // There before the operator starts: a Secret change is a reason to try again, and the first
  // test counts calls.
  beforeStart: (s) => applySecret(s.ns, 'revoked', { apiKey: 'mint_revokedkey000000000000000000' }),
  sim: { exportDurationMs: 300, nonEnterpriseKeys: [NON_ENTERPRISE_KEY] },
  adminKeySecret: 'good',
});

const secret = (name: string, apiKey: string) => applySecret(h.ns, name, { apiKey });
const release = (name: string, spec: Record<string, unknown> = {}) =>
  applyRelease(h.ns, name, { credentialsSecretRef: { name: 'good' }, ...spec });
const conditions = async (name: string) => (await getRelease(h.ns, name)).status?.conditions ?? [];

async function waitReason(name: string, reason: string, timeoutMs = 60_000) {
  return eventually(
    `${name}: Ready reason ${reason}`,
    async () => {
      const cs = await conditions(name);
      const ready = cs.find((c) => c.type === 'Ready');
      return ready?.reason === reason ? { ready, stalled: cs.find((c) => c.type === 'Stalled') } : undefined;
    },
    timeoutMs,
  );
}

const retry = (name: string, value: string) => requestExport(h.ns, name, value);

describe('admin API failures', () => {
  it('a rejected key: AuthenticationFailed, Stalled, no hot loop; recovers as soon as the Secret holds a good key', async () => {
    const before = h.sim.requests.length;
    await release('auth', { credentialsSecretRef: { name: 'revoked' } });
    const { ready, stalled } = await waitReason('auth', 'AuthenticationFailed');
    expect(ready.message).toContain(`Secret ${h.ns}/revoked`);
    expect(stalled?.status).toBe('True');
    // One refused call, and none after it: not even the one its own status write used to trigger.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(h.sim.requests.slice(before).map((r) => `${r.endpoint} ${r.status}`)).toEqual(['start 401']);

    // `requested-at` retries at once, and a refusal is again one call.
    await retry('auth', 'try-again');
    await eventually('a second start call', async () => h.sim.requests.length > before + 1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(h.sim.requests.slice(before).map((r) => `${r.endpoint} ${r.status}`)).toEqual([
      'start 401',
      'start 401',
    ]);

    // The retry delay is 5 min: only the watch on the Secret explains a recovery within the wait.
    await secret('revoked', h.sim.adminKey);
    await waitReason('auth', 'Published');
  });

  it('a key without static export: NotEntitled', async () => {
    await secret('starter', NON_ENTERPRISE_KEY);
    await release('plan', { credentialsSecretRef: { name: 'starter' } });
    const { ready, stalled } = await waitReason('plan', 'NotEntitled');
    expect(ready.message).toMatch(/Enterprise plan/);
    expect(stalled?.status).toBe('True');
  });

  it('a public assistant key: InvalidCredentials without calling the API', async () => {
    await secret('public', 'mint_dsc_publickey00000000000000');
    const calls = h.sim.requests.length;
    await release('public', { credentialsSecretRef: { name: 'public' } });
    const { ready } = await waitReason('public', 'InvalidCredentials');
    expect(ready.message).toMatch(/public/i);
    expect(h.sim.requests.length).toBe(calls);
  });

  it('a failed export: ExportFailed with the reason, and a new try later', async () => {
    await release('broken', { domain: 'fail.example.com' });
    const { ready, stalled } = await waitReason('broken', 'ExportFailed');
    expect(ready.message).toMatch(/Export job se_\w+ failed: .*fail\.example\.com/);
    expect(stalled).toBeUndefined();
  });

  it('a server error while polling: ApiUnavailable, then recovers', async () => {
    h.sim.configure({ faults: ['status:503:1'] });
    await release('flaky');
    await waitReason('flaky', 'ApiUnavailable');
    h.sim.configure({ faults: [] });
    await waitReason('flaky', 'Published');
  });

  it('rate limited on start: RateLimited, then recovers', async () => {
    h.sim.configure({ faults: ['start:429:1'] });
    await release('limited');
    await waitReason('limited', 'RateLimited');
    h.sim.configure({ faults: [] });
    await waitReason('limited', 'Published');
  });

  it('a corrupted bundle: BundleInvalid and nothing published; recovers on a good download', async () => {
    h.sim.configure({ faults: ['download:malformed:1'] });
    await release('corrupt');
    const { ready } = await waitReason('corrupt', 'BundleInvalid');
    expect(ready.message).toMatch(/could not be fetched or verified/);
    expect((await kubectl(['get', 'secret', 'corrupt-values', '-n', h.ns])).code).not.toBe(0);
    h.sim.configure({ faults: [] });
    await waitReason('corrupt', 'Published');
  });

  it('a vanished export job: starts a new one', async () => {
    h.sim.configure({ exportDurationMs: 4_000 });
    await release('vanish');
    await eventually('export job started', async () => {
      return (await getRelease(h.ns, 'vanish')).status?.export?.jobId;
    });
    h.sim.configure({ faults: ['status:404:1:1'] });
    await waitReason('vanish', 'Published', 30_000);
    h.sim.configure({ exportDurationMs: 300 });
    expect((await eventsFor(h.ns, 'vanish')).map((e) => e.reason)).toContain('ExportVanished');
  });
});
