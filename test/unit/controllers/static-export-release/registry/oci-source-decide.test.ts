// The registry source's decisions (spec.source.oci): when the tag is resolved, what a digest asks
// for, and what status and events the outcomes leave. Pure functions, no registry.
import { describe, expect, it } from 'vitest';
import { failure, nextStep } from '../../../../../src/controllers/failures.ts';
import * as ociFolds from '../../../../../src/controllers/static-export-release/registry/pull-image.ts';
import { ociCheckDue } from '../../../../../src/controllers/static-export-release/registry/registry-schedule.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { REQUESTED_AT_ANNOTATION, staticExportReleaseSpecSchema } from '../../../../../src/crd/index.ts';
import { decided as decide, folded } from '../../../../support/fixtures/committed.ts';
import {
  at,
  MIN,
  NOW,
  registryObserved as observed,
  release as platformRelease,
  type ReleaseOptions,
} from '../../../../support/fixtures/release-fixtures.ts';

const afterOciPublish = folded(ociFolds.afterOciPublish);
const afterOciGateFailed = folded(ociFolds.afterOciGateFailed);

const REPO = 'registry.internal:5000/docs/site';
const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const C1 = `sha256-${'a'.repeat(64)}`;
const C2 = `sha256-${'b'.repeat(64)}`;

/** A registry-source release (no domain, no admin key) following REPO every 5 minutes. */
const release = ({ oci, ...opts }: Omit<ReleaseOptions, 'spec' | 'base'> & { oci?: object } = {}) =>
  platformRelease({
    ...opts,
    base: { target: { valuesSecret: { name: 'values' } } },
    spec: { source: { oci: { repository: REPO, interval: '5m', ...oci } } },
  });

/** Serving D1, tag last resolved a minute ago. */
const serving = (overrides: Partial<Status> = {}): Status => ({
  observedGeneration: 1,
  oci: { digest: D1, checkedAt: at(-MIN) },
  current: { version: `${REPO}@${D1}`, contentVersion: C1, pageCount: 8, appliedAt: at(-10 * MIN) },
  history: [{ version: `${REPO}@${D1}`, pageCount: 8, appliedAt: at(-10 * MIN) }],
  ...overrides,
});

const ready = (s: Status) => s.conditions?.find((c) => c.type === 'Ready');

describe('registry source spec', () => {
  const parse = (spec: object) => staticExportReleaseSpecSchema.safeParse(spec);
  const messages = (spec: object) => parse(spec).error?.issues.map((i) => i.message) ?? [];
  const target = { valuesSecret: { name: 'values' } };

  it('takes a registry source without domain or admin key, with defaults', () => {
    const spec = staticExportReleaseSpecSchema.parse({ source: { oci: { repository: REPO } }, target });
    expect(spec.source?.oci).toEqual({ repository: REPO, tag: 'latest', interval: '5m' });
    expect(spec.domain).toBeUndefined();
  });

  it('keeps platform releases valid as they are', () => {
    expect(parse({ domain: 'docs.example.com', credentialsSecretRef: { name: 'k' }, target }).success).toBe(
      true,
    );
  });

  it('refuses no source and two sources, naming the fields', () => {
    expect(messages({ target })).toEqual([
      expect.stringMatching(/exactly one source: either spec\.projectId or spec\.domain/),
    ]);
    expect(messages({ domain: 'docs.example.com', target })).toEqual([
      expect.stringMatching(/exactly one source/),
    ]);
    expect(messages({ source: { oci: { repository: REPO } }, domain: 'docs.example.com', target })).toEqual([
      expect.stringMatching(/spec\.source\.oci cannot be combined with spec\.domain/),
    ]);
    expect(messages({ source: { oci: { repository: REPO } }, pinnedVersion: C1, target })).toEqual([
      expect.stringMatching(/pin a version by following its tag/),
    ]);
  });

  it('refuses repositories with a scheme, tag or digest and bad tags', () => {
    for (const repository of [
      'oci://r.example/x',
      'r.example/x:latest',
      `r.example/x@${D1}`,
      'noregistry',
      'R.example/X',
    ])
      expect(messages({ source: { oci: { repository } }, target })).toEqual([
        expect.stringMatching(/spec\.source\.oci\.repository must be REGISTRY\/REPOSITORY/),
      ]);
    expect(messages({ source: { oci: { repository: REPO, tag: '.x' } }, target })).toEqual([
      expect.stringMatching(/spec\.source\.oci\.tag must be an OCI tag/),
    ]);
  });
});

describe('when the tag is resolved', () => {
  it('at once for a new release, a spec change or a request; else at the interval', () => {
    expect(ociCheckDue(release(), NOW)).toBe(true);
    expect(ociCheckDue(release({ status: serving() }), NOW)).toBe(false);
    expect(ociCheckDue(release({ status: serving(), generation: 2 }), NOW)).toBe(true);
    expect(
      ociCheckDue(release({ status: serving(), annotations: { [REQUESTED_AT_ANNOTATION]: 'now' } }), NOW),
    ).toBe(true);
    expect(
      ociCheckDue(release({ status: serving({ oci: { digest: D1, checkedAt: at(-5 * MIN) } }) }), NOW),
    ).toBe(true);
  });

  it('again before the interval while the digest seen last is not served (a pull failed)', () => {
    expect(ociCheckDue(release({ status: serving({ oci: { digest: D2, checkedAt: at(-MIN) } }) }), NOW)).toBe(
      true,
    );
  });

  it('not again for a digest the publish gate refused under this spec', () => {
    const status = serving({
      oci: {
        digest: D2,
        checkedAt: at(-MIN),
        rejected: { digest: D2, generation: 1, message: 'too few pages' },
      },
    });
    expect(ociCheckDue(release({ status }), NOW)).toBe(false);
    expect(ociCheckDue(release({ status, generation: 2 }), NOW)).toBe(true);
  });
});

describe('decide for a registry source', () => {
  it('pulls the first digest, recording what the tag showed', () => {
    const d = decide(observed(release(), { check: { kind: 'resolved', digest: D1 } }));
    expect(d.action).toEqual({ kind: 'pull', digest: D1 });
    expect(d.status.oci).toEqual({ digest: D1, checkedAt: NOW.toISOString() });
    expect(d.status.observedGeneration).toBe(1);
  });

  it('changes nothing for the digest already served and looks again at the interval', () => {
    const d = decide(observed(release({ status: serving() }), { check: { kind: 'resolved', digest: D1 } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.events).toEqual([]);
    expect(ready(d.status)).toMatchObject({
      status: 'True',
      reason: 'Published',
      message: `Serving ${REPO}@${D1}`,
    });
    expect(d.requeueAfterMs).toBe(5 * MIN);
  });

  it('pulls a new digest while the served one keeps serving', () => {
    const d = decide(observed(release({ status: serving() }), { check: { kind: 'resolved', digest: D2 } }));
    expect(d.action).toEqual({ kind: 'pull', digest: D2 });
    expect(d.status.current?.version).toBe(`${REPO}@${D1}`);
  });

  it('does not pull a refused digest again, and says why it is not published', () => {
    const status = serving({
      oci: {
        digest: D1,
        checkedAt: at(-6 * MIN),
        rejected: { digest: D2, generation: 1, message: 'too few pages' },
      },
    });
    const d = decide(observed(release({ status }), { check: { kind: 'resolved', digest: D2 } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'PublishGateFailed' });
    expect(ready(d.status)?.message).toContain(`Still serving ${REPO}@${D1}`);
  });

  it('reports a failed resolve with its retry rule and keeps serving', () => {
    const f = failure('RegistryUnavailable', 'The registry is unreachable: connection refused', false);
    const d = decide(observed(release({ status: serving() }), { check: { kind: 'failed', failure: f } }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'RegistryUnavailable' });
    expect(d.status.current?.version).toBe(`${REPO}@${D1}`);
    expect(nextStep(d).backoff?.message).toMatch(/unreachable/);
  });

  it('reports a missing Secret found before any call', () => {
    const f = failure(
      'SecretNotFound',
      'Secret web/login named in spec.source.oci.credentialsSecretRef does not exist',
      true,
      30_000,
    );
    const d = decide(observed(release(), { blocked: f }));
    expect(ready(d.status)).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(nextStep(d)).toEqual({ requeueAfterMs: 30_000 });
  });

  it('writes the target again when it lost the served reference', () => {
    const d = decide(observed(release({ status: serving() }), { targetDrifted: true }));
    expect(d.action).toEqual({ kind: 'rewrite' });
  });

  it('does nothing while suspended', () => {
    const r = release({ status: serving() });
    r.spec.suspend = true;
    expect(decide(observed(r, { check: { kind: 'resolved', digest: D2 } })).action).toEqual({ kind: 'none' });
  });

  it('rolls the workloads to a newly published reference', () => {
    const r = release({ status: serving() });
    const d = decide(
      observed(r, {
        workloads: [
          {
            kind: 'Deployment',
            name: 'site',
            generation: 1,
            observedGeneration: 1,
            replicas: 1,
            updatedReplicas: 1,
            availableReplicas: 1,
            annotations: { 'staticexport.dev/version': `${REPO}@${D2}` },
          } as never,
        ],
      }),
    );
    expect(d.action).toMatchObject({
      kind: 'roll',
      annotations: { 'staticexport.dev/version': `${REPO}@${D1}` },
    });
  });
});

describe('outcomes of a pull', () => {
  it('publishes the digest reference as the version, with no link and nothing to renew', () => {
    const r = release({ status: serving({ oci: { digest: D2, checkedAt: NOW.toISOString() } }) });
    const { status, events } = afterOciPublish(observed(r), {
      digest: D2,
      contentVersion: C2,
      pageCount: 9,
      sizeBytes: 1234,
      wrote: true,
      verified: true,
    });
    expect(status.current).toEqual({
      version: `${REPO}@${D2}`,
      contentVersion: C2,
      pageCount: 9,
      sizeBytes: 1234,
      appliedAt: NOW.toISOString(),
    });
    expect(status.history?.map((h) => h.version)).toEqual([`${REPO}@${D2}`, `${REPO}@${D1}`]);
    expect(ready(status)).toMatchObject({ status: 'True', message: `Serving ${REPO}@${D2}` });
    expect(events).toEqual([
      {
        type: 'Normal',
        reason: 'Published',
        note: `Published ${REPO}@${D2} (${C2}, 9 pages, signature verified)`,
      },
    ]);
    // Nothing is ever due but the next check: no renewal.
    const d = decide(observed({ ...r, status }));
    expect(d.action).toEqual({ kind: 'none' });
    expect(d.requeueAfterMs).toBe(5 * MIN);
  });

  it('a refused image is recorded, not published, and the served version stays', () => {
    const r = release({ status: serving({ oci: { digest: D2, checkedAt: NOW.toISOString() } }) });
    const next = afterOciGateFailed(observed(r), { digest: D2, contentVersion: C2, message: 'only 1 pages' });
    expect(next.status.current?.version).toBe(`${REPO}@${D1}`);
    expect(next.status.oci?.rejected).toEqual({ digest: D2, generation: 1, message: 'only 1 pages' });
    expect(ready(next.status)).toMatchObject({ status: 'False', reason: 'PublishGateFailed' });
    expect(next.events[0]).toMatchObject({ type: 'Warning', reason: 'PublishGateFailed' });
    expect(next.requeueAfterMs).toBe(5 * MIN);
    // A later good image clears the refusal.
    const after = afterOciPublish(observed({ ...r, status: next.status }), {
      digest: D1,
      contentVersion: C1,
      pageCount: 8,
      sizeBytes: 1,
      wrote: false,
      verified: false,
    });
    expect(after.status.oci?.rejected).toBeUndefined();
  });
});
