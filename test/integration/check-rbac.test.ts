// RBAC on a real API server: the operator chart's roles for people, aggregated by the
// kube-controller-manager's clusterrole-aggregation controller into the built-in view and edit, let
// a namespace viewer run `static-export status` and an editor request an export; `static-export check`
// names what a ServiceAccount bound to nothing lacks, and judges the operator's ServiceAccount
// through SubjectAccessReviews when run by an admin.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createNamespace,
  eventually,
  installCrds,
  KUBECTL,
  kubeconfig,
  kubectl,
  kubectlOk,
  run,
  tokenKubeconfig,
} from '../support/cluster/kube.ts';
import { applyRelease } from '../support/cluster/resources.ts';
import { helmTemplate, OPERATOR_CHART_DIR } from '../support/tools/chart.ts';
import { runCli } from '../support/tools/run-cli.ts';

const RELEASE = 'chk';
const FULLNAME = `${RELEASE}-static-export-operator`;
let ns: string;
const asUser: Record<string, string> = {};

async function serviceAccountKubeconfig(name: string, clusterRole?: string): Promise<string> {
  await kubectlOk(['create', 'serviceaccount', name, '-n', ns]);
  if (clusterRole)
    await kubectlOk([
      'create',
      'rolebinding',
      name,
      '-n',
      ns,
      `--clusterrole=${clusterRole}`,
      `--serviceaccount=${ns}:${name}`,
    ]);
  return tokenKubeconfig((await kubectlOk(['create', 'token', name, '-n', ns, '--duration=1h'])).trim());
}

const annotate = (kubeconfigFile: string) =>
  run(KUBECTL, [
    '--kubeconfig',
    kubeconfigFile,
    'annotate',
    'ser',
    'docs',
    '-n',
    ns,
    '--overwrite',
    `staticexport.dev/requested-at=${new Date().toISOString()}`,
  ]);

describe.runIf(inject('controlPlaneDir'))('RBAC for people and static-export check', () => {
  beforeAll(async () => {
    await installCrds();
    ns = await createNamespace('check-rbac');
    // The chart's roles for people and the operator's own RBAC, as helm install creates them.
    const { objects, stderr } = await helmTemplate('helm4', { crds: { enabled: false } }, RELEASE, {
      chart: OPERATOR_CHART_DIR,
      namespace: ns,
    });
    const rbac = objects.filter((o) =>
      ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind),
    );
    expect(rbac.length, stderr).toBeGreaterThan(0);
    for (const o of rbac) await kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
    await applyRelease(ns, 'docs');
    asUser.viewer = await serviceAccountKubeconfig('viewer', 'view');
    asUser.editor = await serviceAccountKubeconfig('editor', 'edit');
    asUser.nobody = await serviceAccountKubeconfig('nobody');
  });

  afterAll(async () => {
    await kubectl(['delete', 'namespace', ns, '--wait=false']);
    await kubectl([
      'delete',
      'clusterrole,clusterrolebinding',
      FULLNAME,
      `${FULLNAME}-view`,
      `${FULLNAME}-edit`,
      '--ignore-not-found',
    ]);
  });

  it('lets a user bound to view run status, and one bound to edit request an export', async () => {
    // The aggregation controller adds the chart's rules to view and edit shortly after they appear.
    const status = await eventually('status allowed to view', async () => {
      const r = await runCli(['status', '-n', ns, '--kubeconfig', asUser.viewer as string]);
      return r.code === 0 ? r : undefined;
    });
    expect(status.stdout).toContain('docs');
    const viewerAnnotates = await annotate(asUser.viewer as string);
    expect(viewerAnnotates.code).not.toBe(0);
    expect(viewerAnnotates.stderr).toContain('forbidden');
    await eventually(
      'annotate allowed to edit',
      async () => (await annotate(asUser.editor as string)).code === 0,
    );
    const editorStatus = await runCli(['status', '-n', ns, '--kubeconfig', asUser.editor as string]);
    expect(editorStatus.code, editorStatus.stderr).toBe(0);
  });

  it('check passes the RBAC of a viewer and names what a user bound to nothing lacks', async () => {
    const viewer = await runCli(['check', '-n', ns, '--kubeconfig', asUser.viewer as string]);
    expect(viewer.stdout).toContain(
      `ok    RBAC: you (status, trigger --wait): may list staticexportreleases.staticexport.dev in ${ns}, get staticexportreleases.staticexport.dev in ${ns}`,
    );
    // A viewer may not create SubjectAccessReviews: the operator's ServiceAccount is not judged.
    expect(viewer.stdout).toContain(
      'skip  RBAC: operator ServiceAccount static-export-system/static-export-operator: not checked',
    );
    const nobody = await runCli(['check', '-n', ns, '--kubeconfig', asUser.nobody as string]);
    expect(nobody.code).toBe(7);
    expect(nobody.stdout).toContain(
      `FAIL  RBAC: you (status, trigger --wait): may not list staticexportreleases.staticexport.dev in ${ns}, get staticexportreleases.staticexport.dev in ${ns}: ask for the view ClusterRole in ${ns}`,
    );
    expect(nobody.stderr).toContain('the cluster is not ready for static-export');
  });

  it("check, run by an admin, judges the operator's ServiceAccount: the chart's suffices, another lacks", async () => {
    const flags = ['-n', ns, '--operator-namespace', ns, '--kubeconfig', kubeconfig()];
    const chart = await runCli(['check', ...flags, '--operator-service-account', FULLNAME]);
    expect(chart.stdout).toContain(
      `ok    RBAC: operator ServiceAccount ${ns}/${FULLNAME}: has the 26 permissions it needs`,
    );
    const other = await runCli(['check', ...flags, '--operator-service-account', 'nobody']);
    expect(other.code).toBe(7);
    expect(other.stdout).toContain(
      `FAIL  RBAC: operator ServiceAccount ${ns}/nobody: may not get staticexportreleases.staticexport.dev in ${ns},`,
    );
    expect(other.stdout).toContain(
      `create leases.coordination.k8s.io in ${ns}: install the operator chart with rbac.create=true`,
    );
  });
});
