// `static-export status` against a Kubernetes API on loopback: a table, JSON lines, and each error
// naming its fix with its exit code; the kubeconfig's token never shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_LIST_PAGES } from '../../../src/runtime/kube-client.ts';
import { failingRelease, servedRelease } from '../../support/fixtures/release-status-fixtures.ts';
import {
  endlessBody,
  endlessList,
  FAKE_KUBE_TOKEN,
  type FakeKubeApi,
  fakeKubeconfig,
  list,
  notFound,
  startFakeKubeApi,
} from '../../support/servers/fake-kube-api.ts';
import { tempDir } from '../../support/temp.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';

const SERS = '/apis/staticexport.dev/v1alpha1';
let api: FakeKubeApi;

beforeAll(async () => {
  api = await startFakeKubeApi({
    [`${SERS}/namespaces/docs/staticexportreleases`]: list([
      servedRelease('docs', 'docs'),
      failingRelease('docs', 'api', 'AuthenticationFailed', 'The admin API refused the key'),
    ]),
    [`${SERS}/namespaces/docs/staticexportreleases/docs`]: { body: servedRelease('docs', 'docs') },
    [`${SERS}/namespaces/empty/staticexportreleases`]: list([]),
    [`${SERS}/staticexportreleases`]: list([servedRelease('a', 'x'), servedRelease('b', 'y')]),
  });
});
afterAll(() => api.close());

const status = (args: string[], kubeconfig = api.kubeconfig) =>
  runCli(['status', '--kubeconfig', kubeconfig, ...args]);

describe('static-export status', () => {
  it('shows the releases of a namespace in a table, sorted', async () => {
    const r = await status(['-n', 'docs']);
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toMatch(/^docs\s+api\s+False\s+AuthenticationFailed\s/);
    expect(rows[2]).toMatch(/^docs\s+docs\s+True\s+Published\s/);
    expect(r.stdout + r.stderr).not.toContain(FAKE_KUBE_TOKEN);
  });

  it('shows one release, or all namespaces, as JSON lines', async () => {
    const one = await status(['--json', 'docs/docs']);
    expect(one.code).toBe(0);
    expect(jsonEvents(one.stdout)).toEqual([
      expect.objectContaining({
        event: 'release',
        namespace: 'docs',
        name: 'docs',
        ready: 'True',
        rollout: 'Complete',
      }),
    ]);
    const all = await status(['--json', '-A']);
    expect(jsonEvents(all.stdout).map((e) => `${e.namespace}/${e.name}`)).toEqual(['a/x', 'b/y']);
  });

  it("lists the kubeconfig context's namespace without --namespace", async () => {
    const r = await status(['--json']);
    expect(r.code).toBe(0);
    expect(jsonEvents(r.stdout).map((e) => `${e.namespace}/${e.name}`)).toEqual(['docs/api', 'docs/docs']);
  });

  it('says so when a namespace has no releases', async () => {
    const r = await status(['-n', 'empty']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('No StaticExportReleases in namespace empty.');
  });

  it('exits 2 for an unknown release, naming how to list the known ones', async () => {
    const r = await status(['docs/nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'no StaticExportRelease docs/nope: check the namespace and name (static-export status -n docs lists the releases there).',
    );
  });

  it('exits 7 when the CRDs are not installed, naming how to install them', async () => {
    for (const args of [['-n', 'nocrd'], ['nocrd/docs']]) {
      api.routes[`${SERS}/namespaces/nocrd/staticexportreleases`] = notFound();
      const r = await status(args);
      expect(r.code).toBe(7);
      expect(r.stderr).toContain(
        'the static-export CRDs are not installed: install or upgrade them with the operator chart',
      );
    }
  });

  it('exits 3 when the cluster refuses the credentials or RBAC forbids, without the token', async () => {
    const refused = await status(['-n', 'docs'], fakeKubeconfig(api.server, 'wrong-token-0123456789'));
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("refused the kubeconfig's credentials (401)");
    expect(refused.stderr).not.toContain('wrong-token');
    api.routes[`${SERS}/namespaces/locked/staticexportreleases`] = {
      status: 403,
      body: {
        kind: 'Status',
        reason: 'Forbidden',
        message: 'forbidden: User "ci" cannot list resource',
        code: 403,
      },
    };
    const forbidden = await status(['-n', 'locked']);
    expect(forbidden.code).toBe(3);
    expect(forbidden.stderr).toContain('not allowed to list StaticExportReleases in namespace locked (403');
    expect(forbidden.stderr).toContain(
      'ask for that permission (status and trigger --wait read staticexportreleases.staticexport.dev;',
    );
  });

  it('exits 1 naming the server when its list never ends, after MAX_LIST_PAGES requests', async () => {
    const path = `${SERS}/namespaces/endless/staticexportreleases`;
    api.routes[path] = endlessList();
    const r = await status(['-n', 'endless']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: cannot list StaticExportReleases in namespace endless: the Kubernetes API at ${api.server} kept the list GET ${path} going past ${MAX_LIST_PAGES} pages: refused.\n`,
    );
    expect(api.requests.filter((p) => p === path)).toHaveLength(MAX_LIST_PAGES);
  });

  it('exits 1 naming the server when its answer is too large, having read little more', async () => {
    const path = `${SERS}/namespaces/huge/staticexportreleases`;
    const sent = { bytes: 0 };
    api.routes[path] = endlessBody(sent, 3 * DEFAULT_MAX_RESPONSE_BYTES);
    const r = await status(['-n', 'huge']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: cannot list StaticExportReleases in namespace huge: the Kubernetes API at ${api.server} answered GET ${path} with more than 64 MiB: refused.\n`,
    );
    // Socket buffers on loopback hold a few MiB between the server's writes and the CLI's reads.
    expect(sent.bytes).toBeLessThan(DEFAULT_MAX_RESPONSE_BYTES + 16 * 2 ** 20);
  });

  it('exits 6 when the cluster is unreachable', async () => {
    const r = await status(['-n', 'docs'], fakeKubeconfig('http://127.0.0.1:1'));
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('the Kubernetes API at http://127.0.0.1:1 refused the connection');
  });

  it('exits 2 without a kubeconfig, or with one that does not exist, or with a name and --namespace', async () => {
    const none = await runCli(['status'], { HOME: tempDir('home-') });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config');
    const missing = await status([], '/nonexistent/kubeconfig');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--kubeconfig /nonexistent/kubeconfig cannot be read');
    const fromEnv = await runCli(['status'], { KUBECONFIG: '/nonexistent/kc' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('the kubeconfig /nonexistent/kc cannot be read: it does not exist.');
    const both = await status(['-n', 'docs', 'docs/docs']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give either <namespace>/<name> or --namespace/--all-namespaces');
    const json = await runCli(['status', '--json'], { HOME: tempDir('home-') });
    expect(jsonEvents(json.stdout, 'error')).toEqual([expect.objectContaining({ exitCode: 2 })]);
  });
});
