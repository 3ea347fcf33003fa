// `static-export check` against a Kubernetes API on loopback: exit 0 when all passes, 7 naming the
// failing checks, --wait until they pass, and the access errors with their codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_KUBE_TOKEN,
  type FakeKubeApi,
  type FakeRoutes,
  fakeKubeconfig,
  list,
  startFakeKubeApi,
} from '../../support/fake-kube-api.ts';
import { jsonEvents, runCli } from '../../support/run-cli.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/static-export-system/leases/static-export-operator';
const PODS = '/api/v1/namespaces/static-export-system/pods';
const crd = {
  body: {
    spec: { versions: [{ name: 'v1alpha1', served: true }] },
    status: { conditions: [{ type: 'Established', status: 'True' }] },
  },
};
const heldLease = () => ({
  body: { spec: { holderIdentity: 'op-1_x', leaseDurationSeconds: 15, renewTime: new Date().toISOString() } },
});
const healthy: FakeRoutes = {
  [`${CRDS}/staticexportreleases.staticexport.dev`]: crd,
  [`${CRDS}/agentjobs.staticexport.dev`]: crd,
  [LEASE]: heldLease,
  [PODS]: list([]),
};
let api: FakeKubeApi;

beforeAll(async () => {
  api = await startFakeKubeApi({ ...healthy });
});
afterAll(() => api.close());

const check = (args: string[], kubeconfig = api.kubeconfig) =>
  runCli(['check', '--kubeconfig', kubeconfig, ...args]);

describe('static-export check', () => {
  it('exits 0 when the CRDs are established and the operator holds its Lease', async () => {
    api.routes = { ...healthy };
    const r = await check([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ok    CRD staticexportreleases.staticexport.dev: v1alpha1 established');
    expect(r.stdout).toContain('ok    operator: running: op-1_x holds the Lease');
    const json = await check(['--json']);
    expect(jsonEvents(json.stdout, 'check').map((e) => e.ok)).toEqual([true, true, true]);
  });

  it('exits 7 naming each failing check and its fix', async () => {
    api.routes = { [PODS]: list([]) };
    const r = await check([]);
    expect(r.code).toBe(7);
    expect(r.stdout).toContain(
      'FAIL  CRD agentjobs.staticexport.dev: not installed: install or upgrade them',
    );
    expect(r.stderr).toContain(
      'error: the cluster is not ready for static-export: CRD staticexportreleases.staticexport.dev not installed',
    );
    expect(r.stderr).toContain('operator not running: no Lease static-export-system/static-export-operator');
    const json = await check(['--json']);
    expect(json.code).toBe(7);
    expect(jsonEvents(json.stdout, 'error')).toEqual([expect.objectContaining({ exitCode: 7 })]);
  });

  it('waits with --wait until the checks pass, and gives up with exit 7 when they do not', async () => {
    api.routes = { ...healthy };
    delete api.routes[LEASE];
    setTimeout(() => {
      api.routes[LEASE] = heldLease;
    }, 2500);
    const waited = await check(['--wait', '30s']);
    expect(waited.code).toBe(0);
    expect(waited.stderr).toContain('waiting for operator...');
    delete api.routes[LEASE];
    const started = Date.now();
    const gaveUp = await check(['--wait', '3s']);
    expect(gaveUp.code).toBe(7);
    expect(gaveUp.stderr).toContain('after waiting 3s (--wait)');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('exits 3 when RBAC forbids a read, 6 when unreachable (after --wait too), 2 with a bad --wait', async () => {
    api.routes = {
      ...healthy,
      [PODS]: {
        status: 403,
        body: { kind: 'Status', reason: 'Forbidden', message: 'pods is forbidden', code: 403 },
      },
    };
    const forbidden = await check(['--wait', '10s']);
    expect(forbidden.code).toBe(3);
    expect(forbidden.stderr).toContain(
      'not allowed to list pods in static-export-system (403: pods is forbidden)',
    );
    const gone = await check(['--wait', '2s'], fakeKubeconfig('http://127.0.0.1:1'));
    expect(gone.code).toBe(6);
    expect(gone.stderr).toContain('refused the connection');
    expect(gone.stdout + gone.stderr).not.toContain(FAKE_KUBE_TOKEN);
    const bad = await check(['--wait', '5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--wait <duration>' argument '5' is invalid. expected a duration");
  });
});
