// Issue 29: what a site pod's own token may do with the sync ServiceAccount's pods/status grant. The
// site chart installed by real Helm on the real API server (its admission policy as the chart renders
// it), kwok running its pods beside a database pod and another Service's backend. Each attack is made
// as an attacker who owns one site pod would: with that pod's bound token (what the kubelet projects)
// or an unbound one, against the API server. Only the sidecar's own report gets through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { KubeApiError, KubeClient, resourcePath } from '../../src/runtime/kube-client.ts';
import { PodConditionReporter } from '../../src/sync/reporter.ts';
import {
  createNamespace,
  eventually,
  kubeconfig,
  kubectlOk,
  tokenKubeconfig,
} from '../support/cluster/kube.ts';
import { CHART_DIR, helm, helmInstall } from '../support/tools/chart.ts';

const RELEASE = 'docs';
const SA = 'docs-static-export-site-sync';
const CONDITION = 'staticexport.dev/ContentServed';
const PASSWORD = 'hunter2-in-the-database-pod';
const V1 = `sha256-${'1'.repeat(64)}`;
const V2 = `sha256-${'2'.repeat(64)}`;

interface Condition {
  type: string;
  status: string;
  message?: string;
  lastTransitionTime?: string;
}
interface Pod {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  status: { phase?: string; conditions?: Condition[] };
}

let ns: string;
let admin: KubeClient;
/** The two pods of the chart's Deployment: the attacker owns `own`. */
let own: string;
let other: string;
/** Clients authenticating with a token of the sync ServiceAccount: bound to `own`, and bound to no pod. */
let bound: KubeClient;
let unbound: KubeClient;
let policy: string;

const podPath = (name: string) => resourcePath('v1', 'pods', ns, name);
const pod = (name: string) => admin.get<Pod>(podPath(name));
const conditionOf = (p: Pod, type: string) => p.status.conditions?.find((c) => c.type === type);

/** A PATCH of pods/status as `client`: what the API server answered, the error when it refused. */
async function patchStatus(
  client: KubeClient,
  name: string,
  body: unknown,
  contentType = 'application/strategic-merge-patch+json',
): Promise<Pod | KubeApiError> {
  try {
    return await client.request<Pod>('PATCH', `${podPath(name)}/status`, { body, contentType });
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
}

/** Refused by the chart's admission policy (not by RBAC, which allows pods/status patch). */
function expectPolicyRefused(answer: Pod | KubeApiError, rule: RegExp): void {
  expect(answer).toBeInstanceOf(KubeApiError);
  const e = answer as KubeApiError;
  expect(e.status).toBe(403);
  expect(e.message).toContain(`ValidatingAdmissionPolicy '${policy}'`);
  expect(e.message).toMatch(rule);
}

const served = (version: string, lastTransitionTime = new Date().toISOString()) => ({
  status: {
    conditions: [
      {
        type: CONDITION,
        status: 'True',
        reason: 'Serving',
        message: `serving ${version}`,
        lastTransitionTime,
      },
    ],
  },
});

const OWN_POD_ONLY = /may write the status of its own pod only/;
const NO_METADATA = /may not change a pod's labels, annotations or other metadata/;
const CONDITION_ONLY = /may change the staticexport\.dev\/ContentServed condition only/;

async function token(args: string[]): Promise<KubeClient> {
  const t = (await kubectlOk(['create', 'token', SA, '-n', ns, '--duration=1h', ...args])).trim();
  return KubeClient.create(tokenKubeconfig(t));
}

beforeAll(async () => {
  admin = await KubeClient.create(kubeconfig());
  ns = await createNamespace('sync-admission');
  policy = `${ns}-${SA}`;
  const installed = await helmInstall('helm4', {
    release: RELEASE,
    chart: CHART_DIR,
    namespace: ns,
    values: {
      replicaCount: 2,
      staticExport: { enabled: true, existingSecret: 'site-values', sync: { enabled: true } },
    },
  });
  expect(installed.code, installed.stderr).toBe(0);
  // Another workload's pods: a database with a password in its env, and a Service's real backend.
  await kubectlOk(
    ['apply', '-n', ns, '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'database', labels: { app: 'database' } },
          spec: {
            containers: [
              { name: 'db', image: 'postgres', env: [{ name: 'POSTGRES_PASSWORD', value: PASSWORD }] },
            ],
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'backend', labels: { app: 'backend' } },
          spec: { containers: [{ name: 'api', image: 'api' }] },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'backend' },
          spec: { selector: { app: 'backend' }, ports: [{ port: 80 }] },
        },
      ],
    }),
  );
  const sitePods = await eventually('the site pods and the backend Ready (kwok)', async () => {
    const list = await admin.list<Pod>(resourcePath('v1', 'pods', ns), {
      labelSelector: `app.kubernetes.io/instance=${RELEASE}`,
    });
    const ready = (p: Pod) => conditionOf(p, 'Ready')?.status === 'True';
    return list.items.length === 2 && list.items.every(ready) && ready(await pod('backend'))
      ? list.items
      : undefined;
  });
  [own, other] = sitePods.map((p) => p.metadata.name).sort() as [string, string];
  bound = await token(['--bound-object-kind', 'Pod', '--bound-object-name', own]);
  unbound = await token([]);
  // The policy takes effect a moment after it is created: until the API server refuses a probe
  // that changes nothing (an empty patch of another pod).
  await eventually('the admission policy in effect', async () => {
    const answer = await patchStatus(bound, 'database', {});
    return answer instanceof KubeApiError && answer.message.includes(`ValidatingAdmissionPolicy '${policy}'`);
  });
});

afterAll(async () => {
  // The policy is cluster-scoped: it goes with the release, not with the namespace.
  if (ns) await helm('helm4', ['uninstall', RELEASE, '--kubeconfig', kubeconfig(), '-n', ns]);
  await Promise.all([admin?.close(), bound?.close(), unbound?.close()]);
});

describe("the sync ServiceAccount's pods/status grant, attacked with a site pod's own token", () => {
  it('may not forge ContentServed on another site pod', async () => {
    expectPolicyRefused(await patchStatus(bound, other, served(V1)), OWN_POD_ONLY);
    expect(conditionOf(await pod(other), CONDITION)).toBeUndefined();
  });

  it("may not read another pod's spec through an empty patch (the database's password)", async () => {
    for (const body of [{}, { status: {} }]) {
      const answer = await patchStatus(bound, 'database', body);
      expectPolicyRefused(answer, OWN_POD_ONLY);
      expect((answer as KubeApiError).message).not.toContain(PASSWORD);
    }
  });

  it("may not label a pod into another Service's selector, nor annotate it (its own or another), nor add a finalizer", async () => {
    for (const name of [own, other, 'database']) {
      const rule = name === own ? NO_METADATA : OWN_POD_ONLY;
      expectPolicyRefused(await patchStatus(bound, name, { metadata: { labels: { app: 'backend' } } }), rule);
      expectPolicyRefused(
        await patchStatus(bound, name, { metadata: { annotations: { 'example.com/owned': 'yes' } } }),
        rule,
      );
      expect((await pod(name)).metadata.labels?.app).not.toBe('backend');
    }
    // Nor pin its own pod with a finalizer.
    expectPolicyRefused(
      await patchStatus(bound, own, { metadata: { finalizers: ['example.com/stuck'] } }),
      NO_METADATA,
    );
    // Nor hide it together with a condition it may write.
    expectPolicyRefused(
      await patchStatus(bound, own, { metadata: { labels: { app: 'backend' } }, ...served(V1) }),
      NO_METADATA,
    );
    const endpoints = await kubectlOk([
      'get',
      'endpointslices',
      '-n',
      ns,
      '-l',
      'kubernetes.io/service-name=backend',
      '-o',
      'json',
    ]);
    expect(endpoints).not.toContain(own);
  });

  it("may not take the real backend out of its Service (Ready=False), nor flip its own pod's conditions", async () => {
    const notReady = { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Hijacked' }] } };
    expectPolicyRefused(await patchStatus(bound, 'backend', notReady), OWN_POD_ONLY);
    expectPolicyRefused(await patchStatus(bound, own, notReady), CONDITION_ONLY);
    expect(conditionOf(await pod('backend'), 'Ready')?.status).toBe('True');
    // Replacing the conditions with ContentServed alone drops the kubelet's: refused too.
    const replaced = await patchStatus(
      bound,
      own,
      [{ op: 'replace', path: '/status/conditions', value: served(V1).status.conditions }],
      'application/json-patch+json',
    );
    expectPolicyRefused(replaced, CONDITION_ONLY);
  });

  it('may not set a pod Failed, its own or another', async () => {
    expectPolicyRefused(await patchStatus(bound, own, { status: { phase: 'Failed' } }), CONDITION_ONLY);
    expectPolicyRefused(await patchStatus(bound, other, { status: { phase: 'Failed' } }), OWN_POD_ONLY);
    expect((await pod(own)).status.phase).toBe('Running');
    expect((await pod(other)).status.phase).toBe('Running');
  });

  it('a token bound to no pod may write nothing, not even ContentServed', async () => {
    for (const name of [own, other]) {
      expectPolicyRefused(await patchStatus(unbound, name, served(V1)), OWN_POD_ONLY);
    }
  });

  it("the sidecar's own report gets through, and a new version served is a new transition", async () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => lines.push(line) } });
    const reporter = new PodConditionReporter(bound, ns, own, logger);
    await reporter.report({ type: CONDITION, status: 'True', reason: 'Serving', message: `serving ${V1}` });
    const first = conditionOf(await pod(own), CONDITION);
    expect(first).toMatchObject({ status: 'True', message: `serving ${V1}` });
    // Condition times are whole seconds.
    await new Promise((r) => setTimeout(r, 1_100));
    await reporter.report({ type: CONDITION, status: 'True', reason: 'Serving', message: `serving ${V2}` });
    const second = conditionOf(await pod(own), CONDITION);
    expect(second?.message).toBe(`serving ${V2}`);
    expect(Date.parse(second?.lastTransitionTime ?? '')).toBeGreaterThan(
      Date.parse(first?.lastTransitionTime ?? ''),
    );
    expect(lines.join('')).not.toContain('cannot write');
    // The kubelet's conditions are as they were.
    expect(conditionOf(await pod(own), 'Ready')?.status).toBe('True');
  });
});
