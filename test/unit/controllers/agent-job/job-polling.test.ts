// Following a job once it exists: its rules by name and the foot that records each poll.
import { describe, expect, it } from 'vitest';
import {
  agentPollIntervalMs,
  followJob,
  jobFinished,
  jobNotFound,
  pollFailed,
} from '../../../../src/controllers/agent-job/job-polling.ts';
import { failure } from '../../../../src/controllers/failures.ts';
import { at, job, NOW, observed, remote } from './agent-job-fixtures.ts';

const running = { jobId: 'aj_1', state: 'active' };

describe('jobFinished', () => {
  it('stops at a final state, the generation seen', () => {
    const status = { jobId: 'aj_1', state: 'completed' };
    expect(jobFinished.apply({ o: observed(job(status)), status })).toEqual({
      action: { kind: 'none' },
      status: { ...status, observedGeneration: 1 },
      events: [],
    });
  });

  it('does not apply to a running job', () => {
    expect(jobFinished.apply({ o: observed(job(running)), status: running })).toBeUndefined();
  });
});

describe('pollFailed', () => {
  it("records the poll's failure", () => {
    const f = failure('ApiUnavailable', 'the admin API answered 503', false);
    const d = pollFailed.apply({
      o: observed(job(running), { poll: { kind: 'failed', failure: f } }),
      status: running,
    });
    expect(d).toMatchObject({ action: { kind: 'none' }, status: running, failure: f });
    expect(d?.events).toEqual([{ type: 'Warning', reason: 'ApiUnavailable', note: f.message }]);
  });

  it('does not apply to a poll that answered', () => {
    const o = observed(job(running), { poll: { kind: 'job', job: remote('active') } });
    expect(pollFailed.apply({ o, status: running })).toBeUndefined();
  });
});

describe('jobNotFound', () => {
  it('stalls on a job the platform no longer knows', () => {
    const d = jobNotFound.apply({
      o: observed(job(running), { poll: { kind: 'notFound' } }),
      status: running,
    });
    expect(d?.failure).toEqual({
      reason: 'JobNotFound',
      message: 'Agent job aj_1 no longer exists on the platform',
      stalled: true,
    });
  });

  it('does not apply to a poll that answered', () => {
    const o = observed(job(running), { poll: { kind: 'job', job: remote('active') } });
    expect(jobNotFound.apply({ o, status: running })).toBeUndefined();
  });
});

describe('followJob (the foot)', () => {
  it('records a running job and polls it again', () => {
    const o = observed(job(running), { poll: { kind: 'job', job: remote('active') } });
    expect(followJob({ o, status: running })).toMatchObject({
      action: { kind: 'none' },
      status: { jobId: 'aj_1', state: 'active', model: 'claude', createdAt: at(-5_000) },
      events: [],
      requeueAfterMs: 2_000,
    });
  });

  it('announces a failed agent with a Warning and stops polling', () => {
    const o = observed(job(running), { poll: { kind: 'job', job: remote('failed') } });
    const d = followJob({ o, status: running });
    expect(d.events).toEqual([{ type: 'Warning', reason: 'AgentFailed', note: 'Agent job aj_1 failed' }]);
    expect(d.requeueAfterMs).toBeUndefined();
  });

  it('without a poll, looks again as the job has aged', () => {
    const status = { ...running, createdAt: at(-5 * 60_000) };
    expect(followJob({ o: observed(job(status)), status }).requeueAfterMs).toBe(15_000);
  });
});

describe('agentPollIntervalMs', () => {
  it('backs off polling as the job gets older', () => {
    expect(agentPollIntervalMs(at(-10_000), NOW)).toBe(2_000);
    expect(agentPollIntervalMs(at(-5 * 60_000), NOW)).toBe(15_000);
    expect(agentPollIntervalMs(at(-60 * 60_000), NOW)).toBe(30_000);
  });
});
