// spec.apiBaseUrl cannot send the admin key elsewhere: someone who may create releases or agent
// jobs but not read Secrets points one at a server they control. Real control plane, a second
// HTTP server that records whatever reaches it, and an allowed second simulator.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, applySecret, getAgentJob, getRelease } from '../../support/cluster/resources.ts';

let other: Simulator;
let recorder: Server;
let recorderUrl: string;
const received: string[] = [];

const h = useOperatorSuite({
  namespaces: ['api-base-url'],
  beforeStart: async (s) => {
    recorder = createServer((req, res) => {
      received.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
    recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    other = await startSimulator({ exportDurationMs: 300, linkTtlSeconds: 600 });
    await applySecret(s.ns, 'other-key', { apiKey: other.adminKey });
  },
  operator: () => ({ allowedApiBaseUrls: [other.baseUrl] }),
});

afterAll(async () => {
  await other?.close();
  recorder?.closeAllConnections();
  await new Promise((r) => recorder?.close(r));
});

type Condition = { type: string; status: string; reason: string; message: string };
const condition = (cs: Condition[] | undefined, type: string) => cs?.find((c) => c.type === type);

describe('spec.apiBaseUrl', () => {
  it('a release naming a URL the operator does not allow: ApiBaseUrlNotAllowed, Stalled, and nothing is sent or read', async () => {
    const calls = h.sim.requests.length;
    // The Secret it names does not exist: a SecretNotFound would show the operator read it.
    await applyRelease(h.ns, 'foreign', {
      apiBaseUrl: recorderUrl,
      credentialsSecretRef: { name: 'missing' },
    });
    const ready = await eventually('foreign: ApiBaseUrlNotAllowed', async () => {
      const cs = (await getRelease(h.ns, 'foreign')).status?.conditions as Condition[] | undefined;
      const r = condition(cs, 'Ready');
      return r?.reason === 'ApiBaseUrlNotAllowed' ? { r, stalled: condition(cs, 'Stalled') } : undefined;
    });
    expect(ready.r.message).toContain(`spec.apiBaseUrl ${recorderUrl}`);
    expect(ready.r.message).toContain('--allowed-api-base-urls');
    expect(ready.stalled?.status).toBe('True');

    // The same with the key Secret present: still refused, the key goes nowhere.
    await applyRelease(h.ns, 'foreign', { apiBaseUrl: recorderUrl });
    // A path under it is no way around the list (a version path like /v1 is refused at apply).
    await applyRelease(h.ns, 'foreign-2', { apiBaseUrl: `${recorderUrl}/admin` });
    await eventually('foreign-2: ApiBaseUrlNotAllowed', async () => {
      const r = condition((await getRelease(h.ns, 'foreign-2')).status?.conditions as Condition[], 'Ready');
      return r?.reason === 'ApiBaseUrlNotAllowed';
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(received).toEqual([]);
    expect(h.sim.requests.length).toBe(calls);
    expect(h.logs.join('\n')).not.toContain(h.sim.adminKey);
  });

  it('an agent job naming a URL the operator does not allow: refused the same way', async () => {
    await kubectlOk(
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'staticexport.dev/v1alpha1',
        kind: 'AgentJob',
        metadata: { name: 'foreign', namespace: h.ns },
        spec: {
          projectId: 'docs',
          prompt: 'Fix the typo on the home page',
          credentialsSecretRef: { name: 'admin-key' },
          apiBaseUrl: recorderUrl,
        },
      }),
    );
    const r = await eventually('agent job: ApiBaseUrlNotAllowed', async () => {
      const c = condition((await getAgentJob(h.ns, 'foreign')).status?.conditions as Condition[], 'Ready');
      return c?.reason === 'ApiBaseUrlNotAllowed' ? c : undefined;
    });
    expect(r.message).toContain('spec.apiBaseUrl');
    expect(received).toEqual([]);
  });

  it('a release naming a URL on --allowed-api-base-urls is served from there', async () => {
    const calls = other.requests.length;
    await applyRelease(h.ns, 'allowed', {
      apiBaseUrl: other.baseUrl,
      credentialsSecretRef: { name: 'other-key' },
    });
    await eventually('allowed: Published', async () => {
      const r = condition((await getRelease(h.ns, 'allowed')).status?.conditions as Condition[], 'Ready');
      return r?.reason === 'Published';
    });
    expect(other.requests.length).toBeGreaterThan(calls);
    expect(received).toEqual([]);
  });
});
