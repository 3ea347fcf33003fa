// The operator's admin API clients, one per (base URL, key): closed once unused after their key
// Secret changed, or after a long idle time; never while a call is under way.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminApiError } from '../../../src/api/index.ts';
import { ApiClients, type Credentials } from '../../../src/controllers/credentials.ts';
import { createLogger } from '../../../src/log.ts';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';

let sim: Simulator;
let clients: ApiClients;
let now = 0;

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: 10 });
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  sim.configure({ faults: [] });
  await clients.close();
});

function start(): void {
  now = 1_000_000;
  clients = new ApiClients({
    logger: createLogger({ level: 'silent' }),
    retry: { attempts: 1 },
    idleMs: 600_000,
    now: () => now,
  });
}

const creds = (secret = 'docs/key'): Credentials => ({ baseUrl: sim.baseUrl, apiKey: sim.adminKey, secret });

/** A closed client refuses calls without sending anything. */
async function isClosed(client: ReturnType<ApiClients['get']>): Promise<boolean> {
  const sent = sim.requests.length;
  try {
    await client.getExport({ revision: 'contract', jobId: 'se_none' });
    return false;
  } catch (e) {
    if (!(e instanceof AdminApiError)) throw e;
    return e.kind === 'Network' && sim.requests.length === sent;
  }
}

describe('ApiClients', () => {
  it('reuses one client per base URL and key', () => {
    start();
    expect(clients.get(creds())).toBe(clients.get(creds('other/secret')));
  });

  it('closes the client of a changed key Secret once it was unused for a minute', async () => {
    start();
    const old = clients.get(creds());
    clients.secretChanged('docs', 'key');
    now += 59_000;
    await clients.sweep();
    expect(clients.get(creds('unrelated/secret'))).toBe(old);
    clients.secretChanged('unrelated', 'secret');
    now += 60_000;
    await clients.sweep();
    expect(await isClosed(old)).toBe(true);
    const fresh = clients.get(creds());
    expect(fresh).not.toBe(old);
    expect(await isClosed(fresh)).toBe(false);
  });

  it('keeps the client when a reconcile reads the same key again after the Secret changed', async () => {
    start();
    const client = clients.get(creds());
    clients.secretChanged('docs', 'key');
    expect(clients.get(creds())).toBe(client);
    now += 120_000;
    await clients.sweep();
    expect(clients.get(creds())).toBe(client);
  });

  it('closes a client idle for idleMs, but never one with a call under way', async () => {
    start();
    const idle = clients.get(creds());
    now += 600_000;
    await clients.sweep();
    expect(await isClosed(idle)).toBe(true);

    const busy = clients.get(creds());
    sim.configure({ faults: ['status:delay=300:1'] });
    const call = busy.getExport({ revision: 'contract', jobId: 'se_none' }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    now += 600_000;
    await clients.sweep();
    expect(clients.get(creds())).toBe(busy);
    // The call finished against a live client: the simulator answered it (404 for an unknown job).
    expect(await call).toMatchObject({ kind: 'NotFound' });
  });
});
