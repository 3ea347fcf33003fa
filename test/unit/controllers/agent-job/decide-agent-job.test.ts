import { describe, expect, it } from 'vitest';
import {
  AdminApiError,
  NetworkError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from '../../../../src/api/index.ts';
import { createFailure } from '../../../../src/controllers/agent-job/agent-job-reconciler.ts';
import {
  afterCreateFailed,
  afterCreate as afterCreateFold,
  agentPollIntervalMs,
  type Observed,
  type RemoteJob,
  type Status,
} from '../../../../src/controllers/agent-job/decide-agent-job.ts';
import type { Failure } from '../../../../src/controllers/failures.ts';
import type { AgentJob } from '../../../../src/crd/index.ts';
import { jobDecided as decide, jobCommitted } from '../../../support/fixtures/committed.ts';

/** The create's outcome for the job `o` observed, as written. */
const afterCreate = (o: Observed, status: Status, created: RemoteJob) => {
  const next = afterCreateFold(status, created);
  return { ...next, status: jobCommitted(o.job, next.status, o.now) };
};

const NOW = new Date('2026-11-22T12:00:00Z');
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

const job = (status?: Status): AgentJob => ({
  apiVersion: 'staticexport.dev/v1alpha1',
  kind: 'AgentJob',
  metadata: { name: 'fix-typo', namespace: 'docs', generation: 1 },
  spec: { projectId: 'proj-1', prompt: 'Fix the typo', credentialsSecretRef: { name: 'key', key: 'apiKey' } },
  ...(status ? { status } : {}),
});
const observed = (j: AgentJob, extra: Partial<Observed> = {}): Observed => ({
  now: NOW,
  job: j,
  budgetDelayMs: 0,
  ...extra,
});
const ready = (s: Status) => s.conditions?.find((c) => c.type === 'Ready');
const remote = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'aj_1',
  status,
  model: 'claude',
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
  createdAt: at(-5_000),
  prLink: null,
  ...extra,
});

describe('AgentJob decide', () => {
  it('marks Creating in status, then creates', () => {
    const d = decide(observed(job()));
    expect(d.action).toEqual({ kind: 'create' });
    expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'Creating' });
    expect(d.status.creation).toEqual({ phase: 'Creating', since: at(0) });
  });

  it('never creates again after a Creating job lost its key Secret and got it back', () => {
    const creating = decide(observed(job())).status;
    const blocked: Failure = {
      reason: 'SecretNotFound',
      message: 'gone',
      stalled: true,
      retryAfterMs: 30_000,
    };
    const missing = decide(observed(job(creating), { blocked }));
    expect(missing.action).toEqual({ kind: 'none' });
    expect(ready(missing.status)).toMatchObject({ reason: 'CreateOutcomeUnknown' });
    expect(missing.status.creation).toEqual({ phase: 'OutcomeUnknown', since: at(0) });
    const back = decide(observed(job(missing.status)));
    expect(back.action).toEqual({ kind: 'none' });
    expect(ready(back.status)).toMatchObject({ reason: 'CreateOutcomeUnknown' });
    // whatever the Ready condition says meanwhile
    const overwritten = decide(observed(job({ ...back.status, conditions: [] })));
    expect(overwritten.action).toEqual({ kind: 'none' });
  });

  it('the create answer clears the mark; a failed create keeps it only if the call may have arrived', () => {
    const creating = decide(observed(job())).status;
    expect(afterCreate(observed(job(creating)), creating, remote('active')).status.creation).toBeUndefined();
    const unknown = createFailure(
      new NetworkError('reset', { operation: 'createAgentJob', beforeRequestSent: false }),
      job(),
      NOW,
    );
    expect(afterCreateFailed(creating, unknown).creation).toEqual({ phase: 'OutcomeUnknown', since: at(0) });
    const refused = createFailure(
      new ServerError('unavailable', { operation: 'createAgentJob', status: 503 }),
      job(),
      NOW,
    );
    const retry = afterCreateFailed(creating, refused);
    expect(retry.creation).toBeUndefined();
    expect(decide(observed(job(retry))).action).toEqual({ kind: 'create' });
  });

  it('never creates a second time after a create whose outcome is unknown', () => {
    const creating = decide(observed(job())).status;
    const d = decide(observed(job(creating)));
    expect(d.action).toEqual({ kind: 'none' });
    expect(ready(d.status)).toMatchObject({ reason: 'CreateOutcomeUnknown' });
    expect(ready(d.status)?.message).toMatch(/check the dashboard, then delete and re-create this AgentJob/);
    expect(d.status.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    expect(d.requeueAfterMs).toBeUndefined();
    // and stays that way without new events
    expect(decide(observed(job(d.status))).events).toEqual([]);
  });

  it('waits for the shared project budget instead of failing', () => {
    const d = decide(observed(job(), { budgetDelayMs: 90_000 }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'WaitingForBudget' });
    expect(ready(d.status)?.message).toContain(`created at ${at(90_000)}`);
    expect(d.requeueAfterMs).toBe(90_000);
    // budget frees up: creates
    expect(decide(observed(job(d.status))).action).toEqual({ kind: 'create' });
  });

  it('records the job right after creation and polls it', () => {
    const { status, events } = afterCreate(observed(job()), {}, remote('active'));
    expect(status).toMatchObject({
      jobId: 'aj_1',
      state: 'active',
      model: 'claude',
      source: { repository: 'https://github.com/acme/docs', ref: 'main' },
    });
    expect(status.prLink).toBeUndefined();
    expect(events[0]).toMatchObject({ reason: 'Created' });
    const d = decide(observed(job(status), { poll: { kind: 'job', job: remote('active') } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(ready(d.status)).toMatchObject({ reason: 'Running' });
    expect(d.requeueAfterMs).toBe(2_000);
  });

  it('records the pull request and announces it when completed', () => {
    const pr = 'https://github.com/acme/docs/pull/42';
    const d = decide(
      observed(job({ jobId: 'aj_1', state: 'active' }), {
        poll: { kind: 'job', job: remote('completed', { prLink: pr }) },
      }),
    );
    expect(d.status.prLink).toBe(pr);
    expect(ready(d.status)).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: `Pull request: ${pr}`,
    });
    expect(d.events).toEqual([{ type: 'Normal', reason: 'Completed', note: `Pull request: ${pr}` }]);
    expect(d.requeueAfterMs).toBeUndefined();
  });

  it('says so when the agent completed without changing files', () => {
    const d = decide(
      observed(job({ jobId: 'aj_1', state: 'active' }), { poll: { kind: 'job', job: remote('completed') } }),
    );
    expect(ready(d.status)?.message).toBe('Agent job aj_1 is completed; no file was changed');
  });

  it('reports a failed agent as Stalled, and an archived one as Ready', () => {
    const failed = decide(
      observed(job({ jobId: 'aj_1', state: 'active' }), { poll: { kind: 'job', job: remote('failed') } }),
    );
    expect(ready(failed.status)).toMatchObject({ status: 'False', reason: 'AgentFailed' });
    expect(failed.events[0]?.type).toBe('Warning');
    const archived = decide(
      observed(job({ jobId: 'aj_1', state: 'active' }), {
        poll: { kind: 'job', job: remote('archived', { archivedAt: at(0) }) },
      }),
    );
    expect(ready(archived.status)).toMatchObject({ status: 'True', reason: 'Archived' });
    expect(archived.status.archivedAt).toBe(at(0));
  });

  it('stops polling once the job is final', () => {
    const d = decide(observed(job({ jobId: 'aj_1', state: 'completed' })));
    expect(d).toMatchObject({ action: { kind: 'none' }, events: [] });
    expect(d.requeueAfterMs).toBeUndefined();
  });

  it('keeps polling an unknown state', () => {
    const d = decide(
      observed(job({ jobId: 'aj_1', state: 'active', createdAt: at(-60_000) }), {
        poll: { kind: 'job', job: remote('thinking', { createdAt: at(-60_000) }) },
      }),
    );
    expect(d.status.state).toBe('thinking');
    expect(d.requeueAfterMs).toBe(5_000);
  });

  it('backs off polling as the job gets older', () => {
    expect(agentPollIntervalMs(at(-10_000), NOW)).toBe(2_000);
    expect(agentPollIntervalMs(at(-5 * 60_000), NOW)).toBe(15_000);
    expect(agentPollIntervalMs(at(-60 * 60_000), NOW)).toBe(30_000);
  });

  it('reports a vanished job', () => {
    const d = decide(observed(job({ jobId: 'aj_1', state: 'active' }), { poll: { kind: 'notFound' } }));
    expect(ready(d.status)).toMatchObject({ reason: 'JobNotFound' });
  });
});

describe('create failures', () => {
  const aj = job({});
  const now = new Date('2026-11-22T10:00:00Z');
  it('waits when the client-side budget is used up', () => {
    const f = createFailure(
      new RateLimitedError('used up', { operation: 'createAgentJob', retryAfterMs: 1000, clientSide: true }),
      aj,
      now,
    );
    expect(f).toMatchObject({ reason: 'WaitingForBudget', stalled: false, retryAfterMs: 1000 });
  });
  it("waits for the budget after the server's 429 (nothing was created), and says until when", () => {
    const f = createFailure(
      new RateLimitedError('429', { operation: 'createAgentJob', retryAfterMs: 5000 }),
      aj,
      now,
    );
    expect(f).toMatchObject({ reason: 'WaitingForBudget', stalled: false, retryAfterMs: 5000 });
    expect(f.message).toContain('will be created at 2026-11-22T10:00:05.000Z');
  });
  it('does not retry when the request may have reached the server', () => {
    for (const e of [
      new NetworkError('reset', { operation: 'createAgentJob', beforeRequestSent: false }),
      new TimeoutError('slow', { operation: 'createAgentJob', beforeRequestSent: false }),
      new ServerError('boom', { operation: 'createAgentJob', status: 500 }),
    ]) {
      expect(createFailure(e, aj, now)).toMatchObject({ reason: 'CreateOutcomeUnknown', stalled: true });
    }
  });
  it('retries when the request certainly did not reach the application', () => {
    expect(
      createFailure(
        new NetworkError('refused', { operation: 'createAgentJob', beforeRequestSent: true }),
        aj,
        now,
      ).reason,
    ).toBe('ApiUnavailable');
    expect(
      createFailure(new ServerError('unavailable', { operation: 'createAgentJob', status: 503 }), aj, now)
        .reason,
    ).toBe('ApiUnavailable');
    expect(
      createFailure(new AdminApiError('Server', 'x', { operation: 'createAgentJob' }), aj, now).stalled,
    ).toBe(false);
  });
});
