// An AgentJob, what its reconcile observed and the platform's view of it, for the agent job's tests.
import type { Observed, RemoteJob, Status } from '../../../../src/controllers/agent-job/agent-job-model.ts';
import { afterCreate as afterCreateFold } from '../../../../src/controllers/agent-job/job-creation.ts';
import type { AgentJob } from '../../../../src/crd/index.ts';
import { jobCommitted } from '../../../support/committed.ts';

export const NOW = new Date('2026-11-22T12:00:00Z');
export const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

export const job = (status?: Status): AgentJob => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'AgentJob',
  metadata: { name: 'fix-typo', namespace: 'docs', generation: 1 },
  spec: { projectId: 'proj-1', prompt: 'Fix the typo', credentialsSecretRef: { name: 'key', key: 'apiKey' } },
  ...(status ? { status } : {}),
});

export const observed = (j: AgentJob, extra: Partial<Observed> = {}): Observed => ({
  now: NOW,
  job: j,
  budgetDelayMs: 0,
  ...extra,
});

export const ready = (s: Status) => s.conditions?.find((c) => c.type === 'Ready');

export const remote = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'aj_1',
  status,
  model: 'claude',
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
  createdAt: at(-5_000),
  prLink: null,
  ...extra,
});

/** The create's outcome for the job `o` observed, as written. */
export const afterCreate = (o: Observed, status: Status, created: RemoteJob) => {
  const next = afterCreateFold(status, created);
  return { ...next, status: jobCommitted(o.job, next.status, o.now) };
};
