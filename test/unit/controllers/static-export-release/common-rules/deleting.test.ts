import { describe, expect, it } from 'vitest';
import { deleting } from '../../../../../src/controllers/static-export-release/common-rules/deleting.ts';
import { observed, release, servingV1 } from '../../../../support/fixtures/release-fixtures.ts';

describe('deleting', () => {
  it.each([
    ['not being deleted', undefined, undefined],
    ['being deleted: nothing to do, status as found', '2026-11-22T11:00:00Z', { kind: 'none' }],
  ])('%s', (_, deletionTimestamp, action) => {
    const r = release({ status: servingV1() });
    const d = deleting.apply({ o: observed({ ...r, metadata: { ...r.metadata, deletionTimestamp } }) });
    expect(d?.action).toEqual(action);
    if (d) expect(d.status).toEqual(servingV1());
  });
});
