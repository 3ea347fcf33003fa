import { describe, expect, it } from 'vitest';
import { ProjectNotFoundError, RevisionUnavailableError } from '../../../src/api/index.ts';
import {
  afterFailure,
  classifyError,
  type Failure,
  nextStep,
  RetryableError,
} from '../../../src/controllers/failures.ts';

describe('classifyError: a 404 on an export start is the spec, not a passing outage', () => {
  const HOUR = 3_600_000;
  it('an unknown project: ProjectNotFound, Stalled, naming spec.projectId and the Secret, looked at again hourly', () => {
    const f = classifyError(
      new ProjectNotFoundError('Project nosuch was not found (404) during startExport', {
        operation: 'startExport',
        status: 404,
      }),
      'web/admin-key key apiKey',
    );
    expect(f).toMatchObject({ reason: 'ProjectNotFound', stalled: true, retryAfterMs: HOUR });
    expect(f.message).toContain('spec.projectId');
    expect(f.message).toContain('Secret web/admin-key key apiKey');
    expect(f.message).toContain('Project nosuch was not found');
    // Not the work queue's backoff (a transient failure's), a fixed slow retry.
    expect(afterFailure(f)).toEqual({ requeueAfterMs: HOUR });
  });

  it("the contract's export endpoint gone: RevisionUnavailable, Stalled, saying to move to spec.projectId", () => {
    const f = classifyError(
      new RevisionUnavailableError('POST /v1/static-export/jobs answered 404 naming no resource', {
        operation: 'startExport',
        status: 404,
      }),
      'web/admin-key key apiKey',
    );
    expect(f).toMatchObject({ reason: 'RevisionUnavailable', stalled: true, retryAfterMs: HOUR });
    expect(f.message).toMatch(/set spec\.projectId .* in place of spec\.domain/);
  });
});

describe('afterFailure', () => {
  it('waits a fixed delay when the failure names one', () => {
    expect(
      afterFailure({ reason: 'RateLimited', message: 'm', stalled: false, retryAfterMs: 5_000 }),
    ).toEqual({ requeueAfterMs: 5_000 });
    expect(
      afterFailure({ reason: 'NotEntitled', message: 'm', stalled: true, retryAfterMs: 900_000 }),
    ).toEqual({ requeueAfterMs: 900_000 });
  });
  it('hands a transient failure to the work queue backoff', () => {
    const { backoff } = afterFailure({ reason: 'ApiUnavailable', message: 'down', stalled: false });
    expect(backoff).toBeInstanceOf(RetryableError);
    expect(backoff?.message).toBe('down');
  });
  it('waits for a change when the user must act and no retry helps', () => {
    expect(afterFailure({ reason: 'CreateOutcomeUnknown', message: 'm', stalled: true })).toEqual({});
  });
});

describe('nextStep', () => {
  it("follows a decision's failure over its requeue delay, so a transient poll error backs off", () => {
    const down: Failure = { reason: 'ApiUnavailable', message: 'down', stalled: false };
    expect(nextStep({ failure: down, requeueAfterMs: 1_000 }).backoff).toBeInstanceOf(RetryableError);
    expect(nextStep({ requeueAfterMs: 1_000 })).toEqual({ requeueAfterMs: 1_000 });
    expect(nextStep({})).toEqual({});
  });
});
