import { describe, expect, it } from 'vitest';
import type { Failure } from '../../../../../src/controllers/failures.ts';
import { exportInFlight } from '../../../../../src/controllers/static-export-release/export/export-in-flight.ts';
import type {
  ExportPoll,
  Status,
} from '../../../../../src/controllers/static-export-release/release-model.ts';
import { at, platformCase, release, servingV1 } from '../../../../support/fixtures/release-fixtures.ts';

const running = (state = 'running'): Status => ({
  observedGeneration: 1,
  export: { jobId: 'se_2', state, progress: 0, startedAt: at(-2_000) },
});
const f: Failure = { reason: 'ApiUnavailable', message: 'The admin API call failed: 503', stalled: false };

describe('exportInFlight', () => {
  it.each<[string, Status, ExportPoll | undefined, object | undefined]>([
    ['no export in flight', servingV1(), undefined, undefined],
    [
      'completed, publish cut short: published',
      running('completed'),
      undefined,
      { kind: 'publish', mode: 'NewContent', jobId: 'se_2' },
    ],
    ['not polled yet: polled later', running(), undefined, { kind: 'none' }],
    ['the poll failed: its failure', running(), { kind: 'failed', failure: f }, { kind: 'none' }],
    ['the job is gone: a new one', running(), { kind: 'notFound' }, { kind: 'start', reason: 'JobVanished' }],
    [
      'the job answered: polled again',
      running(),
      { kind: 'job', state: 'running', progress: 5 },
      { kind: 'none' },
    ],
  ])('%s', (_, status, poll, action) => {
    const d = exportInFlight.apply(platformCase(release({ status }), poll ? { poll } : {}));
    expect(d?.action).toEqual(action);
  });

  it('a failed poll is reported as the failure', () => {
    expect(
      exportInFlight.apply(
        platformCase(release({ status: running() }), { poll: { kind: 'failed', failure: f } }),
      )?.failure,
    ).toEqual(f);
  });
});
