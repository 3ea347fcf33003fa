// Whoever writes a release's status, or answers as the Kubernetes API or the trigger receiver,
// controls text the CLI prints: status, check, trigger and their errors must print its control
// sequences as visible escapes, one table row per release, nothing a terminal would obey.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { HOSTILE, TERMINAL_CONTROL } from '../../support/fixtures/hostile-text.ts';
import { failingRelease, servedRelease } from '../../support/fixtures/release-status-fixtures.ts';
import { type FakeKubeApi, list, startFakeKubeApi } from '../../support/servers/fake-kube-api.ts';
import { tempDir } from '../../support/temp.ts';
import { type CliResult, jsonEvents, runCli } from '../../support/tools/run-cli.ts';

const RELEASES = '/apis/staticexport.dev/v1alpha1/namespaces/docs/staticexportreleases';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const AT = '2026-01-01T00:10:00.000Z';
// How the hostile text's screen clear shows once escaped.
const SHOWN = '\\u001b[2J\\u001b[Hcleared';
let api: FakeKubeApi;
let tokenFile: string;

beforeAll(async () => {
  api = await startFakeKubeApi();
  tokenFile = join(tempDir('terminal-output-'), 'token');
  writeFileSync(tokenFile, 'tt-0123456789abcdef0123456789abcdef');
});
afterAll(() => api.close());

/** Every line printed holds no control character, and the hostile text shows escaped on `stream`. */
function expectSafe(r: CliResult, stream: 'stdout' | 'stderr'): void {
  for (const line of `${r.stdout}${r.stderr}`.split('\n')) expect(line).not.toMatch(TERMINAL_CONTROL);
  expect(r[stream]).toContain(SHOWN);
}

function hostileRelease(): StaticExportRelease {
  const r = failingRelease('docs', 'docs', `Failed${HOSTILE}`, HOSTILE);
  const status = r.status as NonNullable<StaticExportRelease['status']>;
  status.current = { ...status.current, version: HOSTILE } as typeof status.current;
  return r;
}

const trigger = (args: string[]) =>
  runCli([
    'trigger',
    '--url',
    api.server,
    '--token-file',
    tokenFile,
    '--kubeconfig',
    api.kubeconfig,
    ...args,
  ]);

describe('human output of text from elsewhere', () => {
  it('status: one row per release, its reason, message and version escaped', async () => {
    api.routes = { [RELEASES]: list([hostileRelease(), servedRelease('docs', 'site')]) };
    const r = await runCli(['status', '--kubeconfig', api.kubeconfig, '-n', 'docs']);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toMatch(/^docs\s+docs\s+False\s+Failed\\u001b\[2J/);
    expect(rows[2]).toMatch(/^docs\s+site\s+True\s+Published\s/);
    expectSafe(r, 'stdout');
  });

  it('status --json: JSON lines with the same text, nothing raw (C1 CSI included)', async () => {
    api.routes = { [RELEASES]: list([hostileRelease()]) };
    const r = await runCli(['status', '--kubeconfig', api.kubeconfig, '-n', 'docs', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/[\u007f-\u009f]/);
    expect(jsonEvents(r.stdout)).toEqual([expect.objectContaining({ message: HOSTILE, version: HOSTILE })]);
  });

  it("check: a CRD condition's message, in its line and in the error", async () => {
    const crd = {
      body: {
        spec: { versions: [{ name: 'v1alpha1', served: true }] },
        status: { conditions: [{ type: 'Established', status: 'False', message: HOSTILE }] },
      },
    };
    api.routes = {
      [`${CRDS}/staticexportreleases.staticexport.dev`]: crd,
      [`${CRDS}/agentjobs.staticexport.dev`]: crd,
    };
    const r = await runCli(['check', '--kubeconfig', api.kubeconfig, '--no-rbac']);
    expect(r.code).toBe(7);
    expect(r.stdout).toContain(`FAIL  CRD agentjobs.staticexport.dev: not established yet (${SHOWN}`);
    expect(r.stderr).toContain(
      `error: the cluster is not ready for static-export: CRD staticexportreleases.staticexport.dev not established yet (${SHOWN}`,
    );
    expectSafe(r, 'stdout');
    expectSafe(r, 'stderr');
  });

  it("trigger: the receiver's requestedAt, and its message in a refusal", async () => {
    api.routes = { '/hooks/docs/docs': { status: 202, body: { requestedAt: HOSTILE } } };
    const accepted = await trigger(['docs/docs']);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toMatch(/^Export requested for docs\/docs at \\u001b\[2J.*\.\n$/);
    expectSafe(accepted, 'stdout');

    api.routes = { '/hooks/docs/docs': { status: 401, body: { message: HOSTILE } } };
    const refused = await trigger(['docs/docs']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`error: the receiver refused the call for docs/docs: ${SHOWN}`);
    expectSafe(refused, 'stderr');
  });

  it("trigger --wait: the version published, and the release's reason and message when it failed", async () => {
    const handled = (r: StaticExportRelease) => {
      (r.status as NonNullable<StaticExportRelease['status']>).lastHandledRequestedAt = AT;
      return r;
    };
    const published = handled(servedRelease('docs', 'docs'));
    (published.status as NonNullable<StaticExportRelease['status']>).current = {
      ...published.status?.current,
      version: HOSTILE,
    } as NonNullable<StaticExportRelease['status']>['current'];
    for (const [release, code, stream] of [
      [published, 0, 'stdout'],
      [handled(hostileRelease()), 4, 'stderr'],
    ] as const) {
      api.routes = {
        '/hooks/docs/docs': { status: 202, body: { requestedAt: AT } },
        [`${RELEASES}/docs`]: { body: release },
      };
      const r = await trigger(['docs/docs', '--wait=1m']);
      expect(r.code, r.stderr).toBe(code);
      expectSafe(r, stream);
    }
  });

  it("errors: the Kubernetes API's message in a refusal", async () => {
    api.routes = {
      [RELEASES]: { status: 403, body: { kind: 'Status', reason: 'Forbidden', message: HOSTILE, code: 403 } },
    };
    const r = await runCli(['status', '--kubeconfig', api.kubeconfig, '-n', 'docs']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      `error: not allowed to list StaticExportReleases in namespace docs (403: ${SHOWN}`,
    );
    expectSafe(r, 'stderr');
  });
});
