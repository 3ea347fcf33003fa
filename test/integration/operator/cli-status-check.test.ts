// `static-export check` and `status` against the real control plane and the operator as a user
// runs it: check fails naming the missing operator, passes once it holds its Lease and fails again
// once it released it; status reads what the operator wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kubeconfig } from '../../support/cluster/kube.ts';
import { OperatorProcess } from '../../support/cluster/operator-process.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease } from '../../support/cluster/resources.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';

const suite = useOperatorSuite({
  namespaces: ['cli-status'],
  sim: { exportDurationMs: 300 },
  operator: false,
});
let operator: OperatorProcess | undefined;

const cli = (args: string[]) => runCli([...args, '--kubeconfig', kubeconfig()]);
const check = (extra: string[] = []) => cli(['check', '--operator-namespace', suite.ns, ...extra]);

beforeAll(async () => {
  await applyRelease(suite.ns, 'docs', { domain: 'docs.example.com' });
});
afterAll(async () => {
  await operator?.kill('SIGTERM');
});

describe('static-export check', () => {
  it('passes the CRDs and fails the operator before it runs, naming where it looked', async () => {
    const r = await check();
    expect(r.code).toBe(7);
    expect(r.stdout).toContain('ok    CRD staticexportreleases.staticexport.dev: v1alpha1 established');
    expect(r.stdout).toContain('ok    CRD agentjobs.staticexport.dev: v1alpha1 established');
    expect(r.stdout).toContain(`FAIL  operator: not running: no Lease ${suite.ns}/static-export-operator`);
  });

  it('with --wait, passes once the operator holds its Lease', async () => {
    operator = OperatorProcess.start({
      namespaces: [suite.ns],
      apiBaseUrl: suite.sim.baseUrl,
      leaseNamespace: suite.ns,
    });
    // The operator runs with the test's own kubeconfig, not a ServiceAccount: no RBAC to check
    // (check-rbac.test.ts does that); with no key given the admin API check is skipped.
    const r = await check(['--wait', '60s', '--json', '--no-rbac']);
    expect(r.code, r.stderr).toBe(0);
    const checks = jsonEvents(r.stdout, 'check');
    expect(checks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ check: 'CRD staticexportreleases.staticexport.dev', ok: true }),
        expect.objectContaining({ check: 'CRD agentjobs.staticexport.dev', ok: true }),
        expect.objectContaining({
          check: 'operator',
          ok: true,
          message: expect.stringMatching(/^running: .* holds the Lease/),
        }),
      ]),
    );
    expect(
      checks.filter((c) => !(c as { ok?: boolean }).ok && !(c as { skipped?: boolean }).skipped),
    ).toEqual([]);
  });
});

describe('static-export status', () => {
  it('shows what the operator reports of a release, as a table and as JSON', async () => {
    const ready = await eventually('docs Ready', async () => {
      const r = await getRelease(suite.ns, 'docs');
      return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? r : undefined;
    });
    const table = await cli(['status', '-n', suite.ns]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[1]).toMatch(
      new RegExp(`^${suite.ns}\\s+docs\\s+True\\s+Published\\s+sha256-`),
    );
    const json = await cli(['status', '--json', `${suite.ns}/docs`]);
    expect(jsonEvents(json.stdout, 'release')).toEqual([
      expect.objectContaining({
        ready: 'True',
        reason: 'Published',
        version: ready.status?.current?.version,
        linkExpiresAt: ready.status?.current?.expiresAt,
        lastPublished: expect.any(String),
      }),
    ]);
    const unknown = await cli(['status', `${suite.ns}/nope`]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`no StaticExportRelease ${suite.ns}/nope`);
  });
});

describe('static-export check after the operator stopped', () => {
  it('fails the operator once it released its Lease', async () => {
    await operator?.kill('SIGTERM');
    operator = undefined;
    const r = await check();
    expect(r.code).toBe(7);
    expect(r.stdout).toContain(
      `FAIL  operator: not running: nobody holds the Lease ${suite.ns}/static-export-operator (it was released)`,
    );
  });
});
