import { describe, expect, it } from 'vitest';
import { joinOrStart } from '../../../../../src/controllers/static-export-release/export/join-or-start.ts';
import type { Status } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { JOIN_WAIT_MS } from '../../../../../src/controllers/static-export-release/schedule.ts';
import type { SharedExport } from '../../../../../src/controllers/static-export-release/share/shared-exports.ts';
import { at, platformCase, release, servingV1, V1 } from '../../../../support/fixtures/release-fixtures.ts';

const fresh: Status = {};
const served = servingV1();

describe('joinOrStart', () => {
  it.each<
    [
      string,
      object,
      Status,
      { shared?: SharedExport; peersUnknown?: boolean },
      object | undefined,
      number | undefined,
    ]
  >([
    ['a new release: starts', {}, fresh, {}, { kind: 'start', reason: 'Initial' }, undefined],
    ['nothing due: neither', {}, served, {}, undefined, undefined],
    ['pinned: neither', { pinnedVersion: V1 }, fresh, {}, undefined, undefined],
    [
      'another release of the group exports: joined',
      {},
      fresh,
      { shared: { jobId: 'se_9', startedAt: at(-1_000) } },
      { kind: 'none' },
      1_000,
    ],
    [
      'another release is starting one: waits for its id',
      {},
      fresh,
      { shared: { startedAt: at(-1_000) } },
      { kind: 'none' },
      JOIN_WAIT_MS,
    ],
    [
      'an older group export, nothing due: neither',
      {},
      served,
      { shared: { jobId: 'se_0', startedAt: at(-24 * 3_600_000) } },
      undefined,
      undefined,
    ],
    [
      'due, but not every release is known yet: waits',
      {},
      fresh,
      { peersUnknown: true },
      { kind: 'none' },
      JOIN_WAIT_MS,
    ],
  ])('%s', (_, spec, status, extra, action, requeueAfterMs) => {
    const d = joinOrStart.apply(platformCase(release({ spec, status }), extra));
    expect(d?.action).toEqual(action);
    expect(d?.requeueAfterMs).toBe(requeueAfterMs);
  });

  it('a start is marked in status before the call', () => {
    expect(joinOrStart.apply(platformCase(release()))?.status.start?.phase).toBe('Starting');
  });
});
