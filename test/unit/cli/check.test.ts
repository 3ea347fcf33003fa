// `static-export check` against a Kubernetes API on loopback: exit 0 when all passes, 7 naming the
// failing checks, --wait until they pass, and the access errors with their codes. The admin key is
// checked against the embedded simulator (the real admin API client).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import {
  FAKE_KUBE_TOKEN,
  type FakeKubeApi,
  type FakeRoutes,
  fakeKubeconfig,
  list,
  notFound,
  startFakeKubeApi,
} from '../../support/servers/fake-kube-api.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';

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
const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const review = (allowed: boolean) => ({ status: 201, body: { status: { allowed } } });
const healthy: FakeRoutes = {
  [`${CRDS}/staticexportreleases.staticexport.dev`]: crd,
  [`${CRDS}/agentjobs.staticexport.dev`]: crd,
  [LEASE]: heldLease,
  [PODS]: list([]),
  [SSAR]: review(true),
  [SAR]: review(true),
};
const NOT_ENTITLED_KEY = 'mint_starterplan0123456789abcdef';
let api: FakeKubeApi;
let sim: Simulator;

beforeAll(async () => {
  api = await startFakeKubeApi({ ...healthy });
  sim = await startSimulator({ nonEnterpriseKeys: [NOT_ENTITLED_KEY] });
});
afterAll(async () => {
  await api.close();
  await sim.close();
});

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
    expect(jsonEvents(json.stdout, 'check').map((e) => e.ok)).toEqual([true, true, true, true, true, true]);
  });

  it('checks RBAC: your reads of releases, and the operator ServiceAccount only when you may ask', async () => {
    api.routes = { ...healthy };
    const ok = await check(['-n', 'docs']);
    expect(ok.stdout).toContain(
      'ok    RBAC: you (status, trigger --wait): may list staticexportreleases.staticexport.dev in docs, get staticexportreleases.staticexport.dev in docs',
    );
    expect(ok.stdout).toContain(
      'ok    RBAC: operator ServiceAccount static-export-system/static-export-operator: has the 26 permissions it needs',
    );
    api.routes = { ...healthy, [SSAR]: review(false) };
    const denied = await check([]);
    expect(denied.code).toBe(7);
    // Without -n: the kubeconfig context's namespace.
    expect(denied.stdout).toContain(
      'FAIL  RBAC: you (status, trigger --wait): may not list staticexportreleases.staticexport.dev in docs, get staticexportreleases.staticexport.dev in docs: ask for the view ClusterRole in docs',
    );
    expect(denied.stdout).toContain(
      'skip  RBAC: operator ServiceAccount static-export-system/static-export-operator: not checked: you may not create subjectaccessreviews.authorization.k8s.io',
    );
    api.routes = { ...healthy, [SAR]: review(false) };
    const operator = await check(['--operator-service-account', 'seo']);
    expect(operator.code).toBe(7);
    expect(operator.stdout).toContain(
      'FAIL  RBAC: operator ServiceAccount static-export-system/seo: may not get staticexportreleases.staticexport.dev in docs,',
    );
    expect(operator.stdout).toContain(
      'create leases.coordination.k8s.io in static-export-system: install the operator chart with rbac.create=true',
    );
  });

  it('checks the admin key with one read that starts no export, only when a key is given', async () => {
    api.routes = { ...healthy };
    const skipped = await check([]);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain(
      'skip  admin API key: not checked: no key given; pass --key-file <file> or set STATIC_EXPORT_API_KEY',
    );
    const before = sim.requests.length;
    const env = (key: string) => ({ STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: key });
    const accepted = await runCli(['check', '--kubeconfig', api.kubeconfig], env(sim.adminKey));
    expect(accepted.code).toBe(0);
    // What the 404 proves, and that it names no site.
    expect(accepted.stdout).toContain(
      'ok    admin API key: accepted: a read of a job no export has answered 404, not 401 (key) or 403 (plan without static export); it checks no site',
    );
    expect(sim.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/static-export/jobs/se_0000000000000000',
    ]);
    expect(sim.exportJobsStarted()).toBe(0);

    const wrongKey = 'mint_revoked0123456789abcdef01234';
    const refused = await runCli(['check', '--kubeconfig', api.kubeconfig], env(wrongKey));
    expect(refused.code).toBe(7);
    expect(refused.stdout).toContain('FAIL  admin API key: refused (401): use a current admin key');
    expect(refused.stderr).toContain('admin API key refused (401)');
    expect(refused.stdout + refused.stderr).not.toContain(wrongKey);

    const plan = await runCli(['check', '--kubeconfig', api.kubeconfig], env(NOT_ENTITLED_KEY));
    expect(plan.code).toBe(7);
    expect(plan.stdout).toContain(
      'FAIL  admin API key: accepted, but static export is not enabled for its organization (403): it requires an Enterprise plan',
    );
    expect(plan.stdout + plan.stderr).not.toContain(NOT_ENTITLED_KEY);

    const unreachable = await runCli(['check', '--kubeconfig', api.kubeconfig], {
      STATIC_EXPORT_API_URL: 'http://127.0.0.1:1',
      STATIC_EXPORT_API_KEY: sim.adminKey,
    });
    expect(unreachable.code).toBe(7);
    expect(unreachable.stdout).toContain(
      'FAIL  admin API key: unreachable: Could not connect to the admin API',
    );
    expect(unreachable.stdout + unreachable.stderr).not.toContain(sim.adminKey);

    const publicKey = await runCli(
      ['check', '--kubeconfig', api.kubeconfig],
      env('mint_dsc_0123456789abcdef'),
    );
    expect(publicKey.stdout).toContain('FAIL  admin API key: This is a public assistant key');

    const noUrl = await runCli(['check', '--kubeconfig', api.kubeconfig], {
      STATIC_EXPORT_API_KEY: sim.adminKey,
    });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--api-url is required');
  });

  it('checks the key without a cluster: no kubeconfig skips the cluster checks, an unreachable one fails them with its exit code', async () => {
    const env = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
    const before = sim.requests.length;
    const none = await runCli(['check', '--kubeconfig', '/nonexistent/kubeconfig'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe(
      'skip  Kubernetes cluster: not checked (the CRDs, the operator, RBAC): --kubeconfig /nonexistent/kubeconfig cannot be read: it does not exist; pass --kubeconfig to check them too\n' +
        'ok    admin API key: accepted: a read of a job no export has answered 404, not 401 (key) or 403 (plan without static export); it checks no site (no read names a domain): the first export start does\n',
    );
    expect(sim.requests.length).toBe(before + 1);

    const refused = await runCli(['check', '--kubeconfig', '/nonexistent/kubeconfig', '--json'], {
      ...env,
      STATIC_EXPORT_API_KEY: 'mint_revoked0123456789abcdef01234',
    });
    expect(refused.code).toBe(7);
    expect(jsonEvents(refused.stdout, 'check').map((e) => [e.check, e.ok])).toEqual([
      ['Kubernetes cluster', true],
      ['admin API key', false],
    ]);

    const down = await runCli(
      ['check', '--kubeconfig', fakeKubeconfig('http://127.0.0.1:1', FAKE_KUBE_TOKEN)],
      env,
    );
    expect(down.code).toBe(6);
    expect(down.stdout).toMatch(
      /^FAIL {2}Kubernetes cluster: the Kubernetes API at http:\/\/127\.0\.0\.1:1 /,
    );
    expect(down.stdout).toContain('ok    admin API key: accepted');
    // Without a key there is nothing to check but the cluster: its error, as before.
    expect((await runCli(['check', '--kubeconfig', '/nonexistent/kubeconfig'], {})).code).toBe(2);
  });

  it("with --project-id, probes the key with the current revision's GET of a job no project has, and explains its 401 and 403", async () => {
    api.routes = { ...healthy };
    const v2 = await startSimulator({
      apiRevision: 2,
      nonEnterpriseKeys: [NOT_ENTITLED_KEY],
      projects: { off: { exportEnabled: false } },
    });
    try {
      const env = (key = v2.adminKey) => ({ STATIC_EXPORT_API_URL: v2.baseUrl, STATIC_EXPORT_API_KEY: key });
      const probe = (args: string[], vars: Record<string, string>) =>
        runCli(['check', '--kubeconfig', api.kubeconfig, ...args], vars);
      const accepted = await probe(['--project-id', 'acme'], env());
      expect(accepted.code, accepted.stderr).toBe(0);
      // A 404 there answers an unknown project too: the project id is reported as not proven.
      expect(accepted.stdout).toContain(
        "ok    admin API key: accepted: a read of a job no export has in project acme answered 404, not 401 or 403; not proven: that project acme is in the key's organization with static export enabled",
      );
      expect(accepted.stdout).toContain('the first export start proves both (404: unknown project)');
      expect(v2.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /v1/static-export/acme/jobs/000000000000000000000000',
      ]);
      expect(v2.exportJobsStarted()).toBe(0);

      const fromEnv = await probe([], { ...env(), STATIC_EXPORT_PROJECT_ID: 'off' });
      expect(fromEnv.code).toBe(7);
      expect(fromEnv.stdout).toContain(
        "FAIL  admin API key: refused for project off (401): the key is wrong or revoked, the organization's plan has no API access, or static export is not enabled for the project",
      );
      const plan = await probe(['--project-id', 'acme'], env(NOT_ENTITLED_KEY));
      expect(plan.code).toBe(7);
      expect(plan.stdout).toContain('FAIL  admin API key: refused for project acme (401)');

      v2.configure({ faults: ['status:403:1'] });
      const forbidden = await probe(['--project-id', 'acme', '--json'], env());
      expect(forbidden.code).toBe(7);
      expect(jsonEvents(forbidden.stdout, 'check').at(-1)).toMatchObject({
        ok: false,
        message: expect.stringContaining(
          "accepted, but not allowed for project acme (403): this machine's address is not on the key's IP allow-list",
        ),
      });
      for (const r of [accepted, fromEnv, plan, forbidden]) {
        expect(r.stdout + r.stderr).not.toContain(v2.adminKey);
        expect(r.stdout + r.stderr).not.toContain(NOT_ENTITLED_KEY);
      }
      expect(v2.requests.every((r) => r.method === 'GET')).toBe(true);
    } finally {
      await v2.close();
    }
  });

  it('with --base-path, checks the value only (no read shows it) and says it goes with each start; refuses a wrong one before anything', async () => {
    api.routes = { ...healthy };
    const v2 = await startSimulator({ apiRevision: 2 });
    try {
      const env = { STATIC_EXPORT_API_URL: v2.baseUrl, STATIC_EXPORT_API_KEY: v2.adminKey };
      const probe = (args: string[]) => runCli(['check', '--kubeconfig', api.kubeconfig, ...args], env);
      const ok = await probe(['--project-id', 'acme', '--base-path', '/docs']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain(
        'ok    export base path: "/docs" is one the platform knows; it is sent with each export start of project acme and the exported links use it',
      );
      // The probe stays one read: a base path cannot be asked about.
      expect(v2.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /v1/static-export/acme/jobs/000000000000000000000000',
      ]);
      const unknown = await probe(['--project-id', 'acme', '--base-path', '/guides']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        '--base-path "/guides" is not a base path the platform knows: use one of "", "/docs", "/documentation".',
      );
      const alone = await probe(['--base-path', '/docs']);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toContain('--base-path goes with --project-id (or STATIC_EXPORT_PROJECT_ID)');
      expect(v2.requests).toHaveLength(1);
    } finally {
      await v2.close();
    }
  });

  it('exits 7 naming each failing check and its fix', async () => {
    api.routes = { [PODS]: list([]), [SSAR]: review(true), [SAR]: review(true) };
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
    // The operator's Lease appears after the first look at it, however slowly the CLI starts.
    let leaseReads = 0;
    api.routes = { ...healthy, [LEASE]: () => (++leaseReads === 1 ? notFound() : heldLease()) };
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

  it('fails the check whose read RBAC forbids, exits 6 when unreachable (after --wait too), 2 with a bad --wait', async () => {
    api.routes = {
      ...healthy,
      [PODS]: {
        status: 403,
        body: { kind: 'Status', reason: 'Forbidden', message: 'pods is forbidden', code: 403 },
      },
    };
    const forbidden = await check([]);
    expect(forbidden.code).toBe(7);
    expect(forbidden.stdout).toContain('ok    CRD agentjobs.staticexport.dev: v1alpha1 established');
    expect(forbidden.stdout).toContain(
      'FAIL  operator: you may not list pods in static-export-system (403): ask for it, or run check with an account that may',
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
