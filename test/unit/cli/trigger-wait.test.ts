// `static-export trigger --wait` against a receiver and a Kubernetes API on loopback: the version
// once published, exit 4 with the release's reason when the export failed, 6 when --wait runs out,
// and errors before any call when the release cannot be read. No token shows.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { failingRelease, servedRelease, VERSION } from '../../support/fixtures/release-status-fixtures.ts';
import {
  FAKE_KUBE_TOKEN,
  type FakeAnswer,
  type FakeKubeApi,
  fakeKubeconfig,
  startFakeKubeApi,
} from '../../support/servers/fake-kube-api.ts';
import { tempDir } from '../../support/temp.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';

const TOKEN = 'tt-0123456789abcdef0123456789abcdef';
const AT = '2026-01-01T00:10:00.000Z';
const RELEASE = '/apis/staticexport.dev/v1alpha1/namespaces/docs/staticexportreleases/docs';
let api: FakeKubeApi;
let tokenFile: string;

beforeAll(async () => {
  api = await startFakeKubeApi();
  tokenFile = join(tempDir('trigger-wait-'), 'token');
  writeFileSync(tokenFile, TOKEN);
});
afterAll(() => api.close());

/** The receiver accepts; the release then goes through `states`, one per read after the call. */
function scenario(states: StaticExportRelease[]): { hooks: () => number } {
  let hooked = 0;
  let reads = 0;
  api.routes = {
    '/hooks/docs/docs': () => {
      hooked += 1;
      return { status: 202, body: { message: 'export requested for docs/docs', requestedAt: AT } };
    },
    [RELEASE]: () => {
      if (hooked === 0) return { body: servedRelease('docs', 'docs') };
      reads += 1;
      return { body: states[Math.min(reads, states.length) - 1] };
    },
  };
  return { hooks: () => hooked };
}

const handled = (r: StaticExportRelease, over: Partial<NonNullable<StaticExportRelease['status']>> = {}) => {
  r.status = { ...(r.status ?? {}), lastHandledRequestedAt: AT, ...over };
  return r;
};

const triggerWait = (args: string[], kubeconfig = api.kubeconfig) =>
  runCli(['trigger', '--url', api.server, '--token-file', tokenFile, '--kubeconfig', kubeconfig, ...args]);

describe('static-export trigger --wait', () => {
  it('exits 0 with the version once the requested export is published', async () => {
    scenario([
      servedRelease('docs', 'docs'),
      handled(servedRelease('docs', 'docs'), { export: { jobId: 'se_2', state: 'running', progress: 50 } }),
      handled(servedRelease('docs', 'docs'), {
        export: { jobId: 'se_2', state: 'completed', finishedAt: AT },
      }),
    ]);
    const r = await triggerWait(['docs/docs', '--wait']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`Published ${VERSION} for docs/docs.\n`);
    expect(r.stderr).toContain('waiting for the export');
    const json = await triggerWait(['--json', '--wait=1m', 'docs/docs']);
    expect(jsonEvents(json.stdout).map((e) => e.event)).toEqual(['triggered', 'published']);
    expect(jsonEvents(json.stdout, 'published')[0]).toEqual({
      event: 'published',
      release: 'docs/docs',
      requestedAt: AT,
      version: VERSION,
    });
    expect(json.stdout + json.stderr + r.stdout + r.stderr).not.toMatch(
      new RegExp(`${TOKEN}|${FAKE_KUBE_TOKEN}`),
    );
  });

  it('reads again through a failing Kubernetes API while --wait lasts', async () => {
    scenario([handled(servedRelease('docs', 'docs'))]);
    const answer = api.routes[RELEASE] as () => FakeAnswer;
    const hooks = () => api.requests.filter((p) => p === '/hooks/docs/docs').length;
    const hooksBefore = hooks();
    let failures = 0;
    api.routes[RELEASE] = () => {
      // The first read (before the call) passes; the next two, during the wait, fail.
      if (hooks() > hooksBefore && failures < 2) {
        failures += 1;
        return {
          status: 503,
          body: { kind: 'Status', reason: 'ServiceUnavailable', message: 'etcd leader changed', code: 503 },
        };
      }
      return answer();
    };
    const r = await triggerWait(['docs/docs', '--wait=1m']);
    expect(r.code, r.stderr).toBe(0);
    expect(failures).toBe(2);
    expect(r.stderr).toContain(
      'waiting for the Kubernetes API: the Kubernetes API failed to get StaticExportRelease docs/docs (503: etcd leader changed)',
    );
  });

  it("exits 4 with the release's reason and message when the requested export failed", async () => {
    scenario([
      handled(failingRelease('docs', 'docs', 'ExportFailed', 'The export job failed: site build error'), {
        export: { jobId: 'se_3', state: 'failed', finishedAt: AT },
      }),
    ]);
    const r = await triggerWait(['docs/docs', '--wait']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      `error: the export requested for docs/docs at ${AT} failed: ExportFailed: The export job failed: site build error`,
    );
  });

  it('exits 6 when --wait runs out, saying what it waited for and what the release says', async () => {
    scenario([servedRelease('docs', 'docs')]);
    const r = await triggerWait(['docs/docs', '--wait=3s']);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(
      `was not published within 3s (--wait): still waiting for the operator to start the export. The release says Ready=True Published`,
    );
  });

  it('calls nothing when the release cannot be read first: unknown (2), no kubeconfig (2), unreachable (6)', async () => {
    const s = scenario([]);
    delete api.routes[RELEASE];
    api.routes['/apis/staticexport.dev/v1alpha1/namespaces/docs/staticexportreleases'] = {
      body: { metadata: { resourceVersion: '1' }, items: [] },
    };
    const unknown = await triggerWait(['docs/docs', '--wait']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no StaticExportRelease docs/docs');
    const none = await runCli(
      ['trigger', '--url', api.server, '--token-file', tokenFile, '--wait', '1m', 'docs/docs'],
      {
        HOME: tempDir('home-'),
      },
    );
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no kubeconfig');
    const gone = await triggerWait(['docs/docs', '--wait'], fakeKubeconfig('http://127.0.0.1:1'));
    expect(gone.code).toBe(6);
    expect(s.hooks()).toBe(0);
  });

  it('exits 2 when --wait would take the release as its duration', async () => {
    const r = await triggerWait(['--wait', 'docs/docs']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '"docs/docs" is the release, not a duration: write --wait=<duration>, or put --wait after the release.',
    );
  });
});
