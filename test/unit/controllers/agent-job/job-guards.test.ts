// The rules that hold back the rest of the AgentJob's ladder, by name.
import { describe, expect, it } from 'vitest';
import type { Status } from '../../../../src/controllers/agent-job/agent-job-model.ts';
import { blocked, deleting } from '../../../../src/controllers/agent-job/job-guards.ts';
import type { Failure } from '../../../../src/controllers/failures.ts';
import { at, job, observed } from './agent-job-fixtures.ts';

describe('deleting', () => {
  it('writes nothing new for a job being deleted, its stored status as it is', () => {
    const status: Status = { creation: { phase: 'Creating', since: at(0) } };
    const deleted = job(status);
    deleted.metadata.deletionTimestamp = at(0);
    const d = deleting.apply({ o: observed(deleted), status: { ...status, lastHandledReconcileAt: 'x' } });
    expect(d).toEqual({ action: { kind: 'none' }, status, events: [] });
  });

  it('does not apply otherwise', () => {
    expect(deleting.apply({ o: observed(job()), status: {} })).toBeUndefined();
  });
});

describe('blocked', () => {
  it('records the problem found before the calls', () => {
    const f: Failure = { reason: 'SecretNotFound', message: 'Secret docs/key not found', stalled: true };
    const d = blocked.apply({ o: observed(job(), { blocked: f }), status: {} });
    expect(d).toMatchObject({ action: { kind: 'none' }, status: {}, failure: f });
    expect(d?.events).toEqual([{ type: 'Warning', reason: 'SecretNotFound', note: f.message }]);
  });

  it('does not apply without one', () => {
    expect(blocked.apply({ o: observed(job()), status: {} })).toBeUndefined();
  });
});
