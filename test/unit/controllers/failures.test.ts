import { describe, expect, it } from 'vitest';
import { afterFailure, type Failure, nextStep, RetryableError } from '../../../src/controllers/failures.ts';

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
