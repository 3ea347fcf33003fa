import { describe, expect, it } from 'vitest';
import { jobVanished } from '../../../../../src/controllers/static-export-release/export/export-in-flight.ts';
import { JOIN_WAIT_MS } from '../../../../../src/controllers/static-export-release/schedule.ts';
import type { SharedExport } from '../../../../../src/controllers/static-export-release/share/shared-exports.ts';
import { at, platformCase, release } from '../../../../support/fixtures/release-fixtures.ts';

const status = { export: { jobId: 'se_2', state: 'running', startedAt: at(-60_000) } };

describe('jobVanished', () => {
  it.each<[string, SharedExport | undefined, object, number | undefined]>([
    ['nobody exports the site: a new export', undefined, { kind: 'start', reason: 'JobVanished' }, undefined],
    [
      'the group still counts it as its own: a new export',
      { jobId: 'se_2', startedAt: at(-60_000) },
      { kind: 'start', reason: 'JobVanished' },
      undefined,
    ],
    [
      'another release started the next one: joined soon',
      { jobId: 'se_3', startedAt: at(-1_000) },
      { kind: 'none' },
      JOIN_WAIT_MS,
    ],
  ])('%s', (_, shared, action, requeueAfterMs) => {
    const d = jobVanished(platformCase(release({ status }), shared ? { shared } : {}), 'se_2');
    expect(d.action).toEqual(action);
    expect(d.requeueAfterMs).toBe(requeueAfterMs);
    expect(d.status.export).toMatchObject({ state: 'vanished', message: 'The export job no longer exists' });
    expect(d.events.map((e) => e.reason)).toEqual(['ExportVanished']);
  });
});
