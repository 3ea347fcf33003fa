import { describe, expect, it } from 'vitest';
import { AdminKeyError, ProjectNotFoundError, RevisionUnavailableError } from '../../../src/api/index.ts';
import { BundleError } from '../../../src/bundle/index.ts';
import {
  afterFailure,
  classifyError,
  ERROR_CLASSIFIERS,
  type Failure,
  nextStep,
  RetryableError,
} from '../../../src/controllers/failures.ts';
import { OciError, SignatureError } from '../../../src/oci/errors.ts';
import { KubeApiError } from '../../../src/runtime/kube-client.ts';
import { TargetError, TargetMisconfiguredError } from '../../../src/targets/owned.ts';

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

describe('classifyError: each module classifies its own errors, asked in a fixed order', () => {
  it('asks the admin API, the bundle, the target, the registry, then the Kubernetes API', () => {
    expect(ERROR_CLASSIFIERS.map((c) => c.name)).toEqual([
      'adminApiFailure',
      'bundleFailure',
      'targetFailure',
      'registryFailure',
      'kubeApiFailure',
    ]);
  });

  // Each error is its module's alone, so no classifier shadows a later one's reason.
  const errors: [string, Error, Failure['reason']][] = [
    ['adminApiFailure', new AdminKeyError('too short'), 'InvalidCredentials'],
    [
      'adminApiFailure',
      new ProjectNotFoundError('nosuch', { operation: 'startExport', status: 404 }),
      'ProjectNotFound',
    ],
    ['bundleFailure', new BundleError('VersionMismatch', 'not the pinned version'), 'PinnedVersionMismatch'],
    ['bundleFailure', new BundleError('SizeMismatch', 'cut short'), 'BundleInvalid'],
    ['targetFailure', new TargetMisconfiguredError('HelmRelease reads no values'), 'TargetMisconfigured'],
    ['targetFailure', new TargetError('forbidden'), 'TargetFailed'],
    ['registryFailure', new SignatureError('Missing', 'no signature'), 'SignatureInvalid'],
    ['registryFailure', new OciError('Auth', 'denied'), 'RegistryAuthFailed'],
    ['kubeApiFailure', new KubeApiError(500, 'InternalError', 'etcd down'), 'TargetFailed'],
  ];
  it.each(errors)('%s alone answers for %s', (owner, error, reason) => {
    const answering = ERROR_CLASSIFIERS.filter((c) => c(error, 'web/key') !== undefined).map((c) => c.name);
    expect(answering).toEqual([owner]);
    expect(classifyError(error, 'web/key').reason).toBe(reason);
  });

  it('ends in the catch-all: an error no module knows is a ReconcileError with its own message', () => {
    expect(ERROR_CLASSIFIERS.some((c) => c(new RangeError('boom'), 'web/key') !== undefined)).toBe(false);
    expect(classifyError(new RangeError('boom'), 'web/key')).toEqual({
      reason: 'ReconcileError',
      message: 'boom',
      stalled: false,
    });
  });
});
