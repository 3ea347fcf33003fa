// The AgentJob's decision through its ladder: which rule wins when several apply (the order, pinned
// by name, as the debug log names the rule that chose: `rule=…`), and what each decides as written.
import { describe, expect, it } from 'vitest';
import { AGENT_JOB_RULES, choose } from '../../../../src/controllers/agent-job/decide-agent-job.ts';
import type { Failure } from '../../../../src/controllers/failures.ts';
import { jobDecided as decide } from '../../../support/committed.ts';
import { afterCreate, at, job, observed, ready, remote } from './agent-job-fixtures.ts';

describe('the ladder', () => {
  it('deleted, finished, a create in doubt, a problem, the budget, a create, a failed poll, a vanished job', () => {
    expect(AGENT_JOB_RULES.map((r) => r.name)).toEqual([
      'deleting',
      'jobFinished',
      'createOutcomeUnknown',
      'blocked',
      'waitForBudget',
      'createJob',
      'pollFailed',
      'jobNotFound',
    ]);
  });

  const secretGone: Failure = { reason: 'SecretNotFound', message: 'gone', stalled: true };
  it.each([
    [
      'a create in doubt wins over a problem found',
      job({ creation: { phase: 'Creating', since: at(0) } }),
      { blocked: secretGone },
      'createOutcomeUnknown',
    ],
    ['a problem found wins over a create', job(), { blocked: secretGone }, 'blocked'],
    ['the budget holds back a create', job(), { budgetDelayMs: 1_000 }, 'waitForBudget'],
    [
      'a finished job wins over a problem found',
      job({ jobId: 'aj_1', state: 'completed' }),
      { blocked: secretGone },
      'jobFinished',
    ],
    [
      'the foot follows a running job',
      job({ jobId: 'aj_1', state: 'active' }),
      { poll: { kind: 'job' as const, job: remote('active') } },
      'settle',
    ],
  ])('names the rule that chose: %s', (_, j, extra, rule) => {
    expect(choose(observed(j, extra)).rule).toBe(rule);
  });
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

  it('reports a vanished job', () => {
    const d = decide(observed(job({ jobId: 'aj_1', state: 'active' }), { poll: { kind: 'notFound' } }));
    expect(ready(d.status)).toMatchObject({ reason: 'JobNotFound' });
  });
});
