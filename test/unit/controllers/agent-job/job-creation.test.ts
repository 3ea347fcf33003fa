// Creating the agent job at most once: its rules by name, the create call's failures and the fold
// of its outcome (real error classes of the API client, no doubles).
import { describe, expect, it } from 'vitest';
import {
  AdminApiError,
  NetworkError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from '../../../../src/api/index.ts';
import type { Status } from '../../../../src/controllers/agent-job/agent-job-model.ts';
import {
  afterCreateCall,
  afterCreateFailed,
  createFailure,
  createJob,
  createOutcomeUnknown,
  waitForBudget,
} from '../../../../src/controllers/agent-job/job-creation.ts';
import { jobDecided as decide } from '../../../support/committed.ts';
import { afterCreate, at, job, NOW, observed, remote } from './agent-job-fixtures.ts';

describe('createOutcomeUnknown', () => {
  it('holds a job marked Creating without a job id, told once', () => {
    const first = createOutcomeUnknown.apply({
      o: observed(job()),
      status: { creation: { phase: 'Creating', since: at(0) } },
    });
    expect(first).toMatchObject({
      action: { kind: 'none' },
      status: { creation: { phase: 'OutcomeUnknown', since: at(0) } },
      failure: { reason: 'CreateOutcomeUnknown', stalled: true },
      events: [{ type: 'Warning', reason: 'CreateOutcomeUnknown' }],
    });
    const again = createOutcomeUnknown.apply({
      o: observed(job()),
      status: { creation: { phase: 'OutcomeUnknown', since: at(0) } },
    });
    expect(again?.events).toEqual([]);
  });

  it('does not apply without a mark, or once the job id is recorded', () => {
    expect(createOutcomeUnknown.apply({ o: observed(job()), status: {} })).toBeUndefined();
    const recorded: Status = { jobId: 'aj_1', creation: { phase: 'Creating', since: at(0) } };
    expect(createOutcomeUnknown.apply({ o: observed(job()), status: recorded })).toBeUndefined();
  });
});

describe('waitForBudget', () => {
  it('waits, without failing, until the budget allows one more job', () => {
    const d = waitForBudget.apply({ o: observed(job(), { budgetDelayMs: 90_000 }), status: {} });
    expect(d).toMatchObject({
      action: { kind: 'none' },
      requeueAfterMs: 90_000,
      failure: { reason: 'WaitingForBudget', stalled: false, retryAfterMs: 90_000 },
    });
  });

  it('does not apply while the budget allows a job, or once the job exists', () => {
    expect(waitForBudget.apply({ o: observed(job()), status: {} })).toBeUndefined();
    const o = observed(job(), { budgetDelayMs: 90_000 });
    expect(waitForBudget.apply({ o, status: { jobId: 'aj_1' } })).toBeUndefined();
  });
});

describe('createJob', () => {
  it('marks Creating, with the generation seen, then creates', () => {
    expect(createJob.apply({ o: observed(job()), status: {} })).toEqual({
      action: { kind: 'create' },
      status: { creation: { phase: 'Creating', since: at(0) }, observedGeneration: 1 },
      events: [],
    });
  });

  it('does not apply once the job exists', () => {
    expect(createJob.apply({ o: observed(job()), status: { jobId: 'aj_1' } })).toBeUndefined();
  });
});

describe('the create call, folded', () => {
  const creating: Status = { creation: { phase: 'Creating', since: at(0) } };

  it('records the job with its Created event; the mark goes', () => {
    expect(afterCreateCall(job(), NOW, creating, { kind: 'created', job: remote('active') })).toEqual({
      status: {
        jobId: 'aj_1',
        state: 'active',
        model: 'claude',
        source: { repository: 'https://github.com/acme/docs', ref: 'main' },
        createdAt: at(-5_000),
      },
      events: [{ type: 'Normal', reason: 'Created', note: 'Created agent job aj_1' }],
    });
  });

  it('keeps the mark, in doubt, when the call may have arrived, and records the failure with its cause', () => {
    const error = new NetworkError('reset', { operation: 'createAgentJob', beforeRequestSent: false });
    const next = afterCreateCall(job(), NOW, creating, { kind: 'failed', error });
    expect(next).toMatchObject({
      status: { creation: { phase: 'OutcomeUnknown', since: at(0) } },
      failure: { reason: 'CreateOutcomeUnknown', stalled: true },
      cause: error,
    });
  });

  it('drops the mark when nothing was created: a 429 waits for the budget, a 503 is retried', () => {
    const limited = new RateLimitedError('429', { operation: 'createAgentJob', retryAfterMs: 5000 });
    expect(afterCreateCall(job(), NOW, creating, { kind: 'failed', error: limited })).toMatchObject({
      status: {},
      failure: { reason: 'WaitingForBudget', retryAfterMs: 5000 },
    });
    const refused = new ServerError('unavailable', { operation: 'createAgentJob', status: 503 });
    const next = afterCreateCall(job(), NOW, creating, { kind: 'failed', error: refused });
    expect(next.status).toEqual({});
    expect(next).toMatchObject({ failure: { reason: 'ApiUnavailable', stalled: false } });
  });
});

describe('create outcome', () => {
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
