// The registry source: what it observes of the tag, the target and the workloads for each state of a
// release following a registry, and the decision that follows. No registry answers here: a check
// that is due meets a missing Secret or a refused connection.

import { describe, expect, it } from 'vitest';
import { failure } from '../../../../../src/controllers/failures.ts';
import type { RegistryObserved } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { closeLook } from '../../../../../src/controllers/static-export-release/sources/source.ts';
import { sourceFor } from '../../../../../src/controllers/static-export-release/sources/source-for.ts';
import type { StaticExportRelease } from '../../../../../src/crd/index.ts';
import { release } from '../../../../support/fixtures/release-fixtures.ts';
import { act, decideAndClaim, lent, loaded } from '../sources/context.ts';
import { D1, ociRelease, REPO, servingD1 } from './oci-fixtures.ts';

/** Follows a repository on `host` (never checked), with `oci` merged over its source and `spec` over the rest. */
const following = (host: string, oci: object = {}, spec: object = {}) =>
  release({
    base: { target: { valuesSecret: { name: 'values' } } },
    spec: { source: { oci: { repository: `${host}/docs/site`, interval: '5m', ...oci } }, ...spec },
  });

/** Nothing listens on port 1: the connection is refused at once. */
const REFUSING = '127.0.0.1:1';

describe('the registry source observes', () => {
  it.each<[string, StaticExportRelease, object, string]>([
    // name, release, observed (beyond source, release, clock and spec.source.oci), the decision's action
    [
      'no check before the interval is up; a served reference its values Secret lost',
      ociRelease(),
      { targetDrifted: true, workloads: [] },
      'rewrite',
    ],
    [
      'a due check that cannot read the login Secret',
      following(REFUSING, { credentialsSecretRef: { name: 'login' } }),
      { blocked: { reason: 'SecretNotFound' } },
      'none',
    ],
    [
      'a due check the registry refused',
      following(REFUSING),
      { check: { kind: 'failed', failure: { stalled: false } } },
      'none',
    ],
  ])('%s', async (_, r, expected, action) => {
    const look = await sourceFor(lent().ctx, r).observe(loaded(r), undefined);
    const { source, now, release: seen, oci, ...rest } = look.observed as RegistryObserved;
    expect(source).toBe('registry');
    expect(oci).toBe(r.spec.source?.oci);
    expect(rest).toMatchObject(expected);
    expect(decideAndClaim(look).action.kind).toBe(action);
    closeLook(look);
  });

  it('nothing while suspended: no check, no target read', async () => {
    const l = lent();
    const r = following(REFUSING, {}, { suspend: true });
    const look = await sourceFor(l.ctx, r).observe(loaded(r), undefined);
    const { source, now, release: seen, oci, ...rest } = look.observed as RegistryObserved;
    expect(rest).toEqual({});
    expect(l.reads).toEqual([]);
  });

  it('a problem found first, and opens nothing', async () => {
    const blocked = failure('InvalidSpec', 'bad', true);
    const l = lent();
    const r = following(REFUSING);
    const look = await sourceFor(l.ctx, r).observe(loaded(r, { blocked }), undefined);
    expect(look.observed).toMatchObject({ blocked });
    expect(l.reads).toEqual([]);
  });
});

describe('the registry source acts', () => {
  it('writes the served reference again to a values Secret that lost it, with no pull', async () => {
    const l = lent();
    const r = ociRelease();
    const look = await sourceFor(l.ctx, r).observe(loaded(r), undefined);
    const d = decideAndClaim(look);
    const result = await act(l, look, d);
    expect(d.action).toEqual({ kind: 'rewrite' });
    const data = l.created[0]?.data ?? {};
    expect(Buffer.from(data.ociReference ?? '', 'base64').toString()).toBe(`${REPO}@${D1}`);
    expect(Buffer.from(data.version ?? '', 'base64').toString()).toBe(servingD1.current?.contentVersion);
    expect(l.committed[0]?.events.map((e) => e.reason)).toEqual(['TargetRepaired']);
    expect(result).toEqual({ requeueAfterMs: 0 });
  });
});

describe('sourceFor', () => {
  it.each<[string, StaticExportRelease, boolean]>([
    ['the platform without spec.source (the admin API is called)', release(), true],
    ['the registry spec.source.oci names (no admin API)', ociRelease(), false],
  ])('picks %s', (_, r, callsApi) => {
    expect(sourceFor(lent().ctx, r).callsApi).toBe(callsApi);
  });
});
