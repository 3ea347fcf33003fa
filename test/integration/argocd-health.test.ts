// The Argo CD health check (examples/argocd/health.lua, the script the operator chart's README
// shows) in a real Lua 5.1 interpreter, over objects in each state as the controllers' own decide
// functions write them. (The same script over live objects: operator/status-conventions.test.ts.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Status as JobStatus } from '../../src/controllers/agent-job/agent-job-model.ts';
import * as exportFolds from '../../src/controllers/static-export-release/export/publish-content.ts';
import type { Status } from '../../src/controllers/static-export-release/release-model.ts';
import {
  withWriteBackFailure,
  writeBackFailure,
} from '../../src/controllers/static-export-release/write-back/write-back.ts';
import {
  type AgentJob,
  type StaticExportRelease,
  staticExportReleaseSpecSchema,
} from '../../src/crd/index.ts';
import { ROOT } from '../support/cluster/kube.ts';
import {
  committed,
  decided as decide,
  jobDecided as decideJob,
  folded,
} from '../support/fixtures/committed.ts';
import { ARGOCD_HEALTH_SCRIPT, argoHealth, luaLiteral } from '../support/tools/status-tools.ts';

const NOW = new Date('2026-11-22T12:00:00Z');
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
const V1 = `sha256-${'1'.repeat(64)}`;
const afterPublish = folded(exportFolds.afterPublish);

const release = (
  status?: Status,
  spec: Record<string, unknown> = {},
  generation = 1,
): StaticExportRelease => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'StaticExportRelease',
  metadata: { name: 'docs', namespace: 'web', generation },
  spec: staticExportReleaseSpecSchema.parse({
    domain: 'docs.example.com',
    credentialsSecretRef: { name: 'key' },
    target: { valuesSecret: { name: 'values' } },
    ...spec,
  }),
  ...(status ? { status } : {}),
});

const job = (status?: JobStatus, prompt = 'Fix the typo'): AgentJob => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'AgentJob',
  metadata: { name: 'fix', namespace: 'docs', generation: 1 },
  spec: { projectId: 'p', prompt, credentialsSecretRef: { name: 'key', key: 'apiKey' } },
  ...(status ? { status } : {}),
});

const exporting = decide({
  source: 'platform',
  now: NOW,
  release: release({
    observedGeneration: 1,
    export: { jobId: 'se_1', state: 'running', startedAt: at(-1_000), generation: 1 },
  }),
  poll: { kind: 'job', state: 'running', progress: 40 },
}).status;
const served = afterPublish(
  { now: NOW, release: release({ ...exporting, export: { ...exporting.export, state: 'completed' } }) },
  {
    mode: 'NewContent',
    jobId: 'se_1',
    version: V1,
    expiresAt: new Date(NOW.getTime() + 3_600_000),
    wrote: true,
  },
).status;
const stalled = decide({
  source: 'platform',
  now: NOW,
  release: release(served),
  blocked: { reason: 'AuthenticationFailed', message: 'The admin API rejected the key', stalled: true },
}).status;
const exportFailed = decide({
  source: 'platform',
  now: NOW,
  release: release({
    observedGeneration: 1,
    export: { jobId: 'se_2', state: 'running', startedAt: at(-1_000), generation: 1 },
  }),
  poll: { kind: 'job', state: 'failed', error: 'renderer crashed' },
}).status;

// Serving, but the version could not be committed to Git: GitWriteBack False, Ready still True.
const GIT = { gitWriteBack: { url: 'https://git.example.com/acme/gitops.git', path: 'values.yaml' } };
const writeBackFailed = committed(
  release(served, GIT),
  {
    status: withWriteBackFailure(
      served,
      writeBackFailure(served, 'GitAuthRefused', 'git.example.com/acme/gitops refused the credentials'),
      1,
      NOW,
    ),
  },
  NOW,
).status;

const running: JobStatus = { observedGeneration: 1, jobId: 'aj_1', state: 'active', createdAt: at(-1_000) };
const remote = (status: string) => ({ id: 'aj_1', status, createdAt: at(-1_000), prLink: null });
const jobRunning = decideJob({
  now: NOW,
  job: job(running),
  budgetDelayMs: 0,
  poll: { kind: 'job', job: remote('active') },
}).status;
const jobDone = decideJob({
  now: NOW,
  job: job(running),
  budgetDelayMs: 0,
  poll: { kind: 'job', job: { ...remote('completed'), prLink: 'https://github.com/acme/docs/pull/7' } },
}).status;
const jobFailed = decideJob({
  now: NOW,
  job: job(running),
  budgetDelayMs: 0,
  poll: { kind: 'job', job: remote('failed') },
}).status;

describe('Argo CD health check (Lua 5.1)', () => {
  it.each([
    [
      'StaticExportRelease without status (just created)',
      release(),
      'Progressing',
      'Waiting for the operator',
    ],
    [
      '… with the defaulted status only (observedGeneration -1)',
      release({ observedGeneration: -1 }),
      'Progressing',
      'Waiting for the operator to act on generation 1',
    ],
    ['… exporting', release(exporting), 'Progressing', 'Export job se_1 is running, 40%'],
    ['… serving', release(served), 'Healthy', `Serving ${V1}; link renewal at`],
    [
      '… serving, spec changed since',
      release(served, {}, 2),
      'Progressing',
      'Waiting for the operator to act on generation 2',
    ],
    [
      '… stalled on its key',
      release(stalled),
      'Degraded',
      'AuthenticationFailed: The admin API rejected the key',
    ],
    [
      '… its export failed',
      release(exportFailed),
      'Degraded',
      'ExportFailed: Export job se_2 failed: renderer crashed',
    ],
    ['… serving, its Git write-back failed', release(writeBackFailed, GIT), 'Healthy', `Serving ${V1}`],
    ['… suspended', release(served, { suspend: true }), 'Suspended', 'spec.suspend is true'],
    ['AgentJob without status', job(), 'Progressing', 'Waiting for the operator'],
    ['… running', job(jobRunning), 'Progressing', 'Agent job aj_1 is active'],
    ['… completed', job(jobDone), 'Healthy', 'Pull request: https://github.com/acme/docs/pull/7'],
    ['… failed', job(jobFailed), 'Degraded', 'AgentFailed: Agent job aj_1 failed'],
  ])('%s: %s', async (_what, obj, status, message) => {
    const health = await argoHealth(obj);
    expect(health.status).toBe(status);
    expect(health.message).toContain(message);
  });

  it('passes strings through byte for byte (quotes, backslashes, non-ASCII, digits after escapes)', async () => {
    const message = 'Serving "v1" from C:\\docs — ü\n1';
    const obj = release({
      observedGeneration: 1,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Published', message, lastTransitionTime: at(0) },
      ],
    });
    expect(luaLiteral('\n1')).toBe('"\\0101"');
    expect((await argoHealth(obj)).message).toBe(message);
  });

  it("the operator chart's README shows the script as shipped, once, for both kinds", () => {
    const script = readFileSync(ARGOCD_HEALTH_SCRIPT, 'utf8');
    const readme = readFileSync(join(ROOT, 'charts', 'static-export-operator', 'README.md'), 'utf8');
    const block =
      /```yaml\n(apiVersion: v1\nkind: ConfigMap\nmetadata:\n {2}name: argocd-cm[\s\S]*?)```/.exec(
        readme,
      )?.[1];
    const data = (parse(block ?? '') as { data: Record<string, string> }).data;
    for (const kind of ['StaticExportRelease', 'AgentJob']) {
      expect(data[`resource.customizations.health.staticexport.dev_${kind}`]).toBe(script);
    }
    expect(readme.split('local hs = ').length - 1, 'the script is pasted once').toBe(1);
  });
});
