import { describe, expect, it } from 'vitest';
import {
  startOutcomeUnknown,
  withoutExpiredStart,
} from '../../../../../src/controllers/static-export-release/export/start-outcome-unknown.ts';
import {
  DEFAULT_TUNABLES,
  type Status,
} from '../../../../../src/controllers/static-export-release/release-model.ts';
import { at, MIN, NOW, platformCase, release } from '../../../../support/fixtures/release-fixtures.ts';

const wait = DEFAULT_TUNABLES.startOutcomeWaitMs;
const marked = (phase: 'Starting' | 'OutcomeUnknown', sinceMs: number): Status => ({
  start: { phase, since: at(-sinceMs) },
});

describe('startOutcomeUnknown', () => {
  it.each([
    ['no start mark', {}, undefined, 0],
    ['a start just sent: waits out the rest, told once', marked('Starting', MIN), wait - MIN, 1],
    ['already told: waits on, silently', marked('OutcomeUnknown', 2 * MIN), wait - 2 * MIN, 0],
  ])('%s', (_, status, retryAfterMs, events) => {
    const d = startOutcomeUnknown.apply(platformCase(release({ status })));
    expect(d?.failure?.retryAfterMs).toBe(retryAfterMs);
    expect(d?.events.length ?? 0).toBe(events);
    if (d) expect(d.status.start?.phase).toBe('OutcomeUnknown');
  });
});

describe('withoutExpiredStart', () => {
  it.each([
    ['a mark within the wait stays', marked('Starting', wait - 1), true],
    ['a mark whose wait is over goes', marked('OutcomeUnknown', wait), false],
  ])('%s', (_, status, kept) => {
    expect(withoutExpiredStart(status, NOW, DEFAULT_TUNABLES).start !== undefined).toBe(kept);
  });
});

describe('startOutcomeUnknown while a link is served', () => {
  const serving = (renewalInMs: number, jobId: string | null = 'job-1'): Status => ({
    ...marked('OutcomeUnknown', MIN),
    current: {
      version: 'v1',
      ...(jobId === null ? {} : { jobId }),
      expiresAt: at(renewalInMs + 5 * MIN),
      renewalTime: at(renewalInMs),
    },
  });

  it('renews the served link when due, keeping the mark (a renewal starts nothing)', () => {
    const d = startOutcomeUnknown.apply(platformCase(release({ status: serving(0) })));
    expect(d?.action).toMatchObject({ kind: 'publish', mode: 'Renew', jobId: 'job-1' });
    expect(d?.failure).toBeUndefined();
    expect(d?.status.start).toEqual({ phase: 'OutcomeUnknown', since: at(-MIN) });
  });

  it('wakes for a renewal due before the wait is over', () => {
    const d = startOutcomeUnknown.apply(platformCase(release({ status: serving(3 * MIN) })));
    expect(d?.action.kind).toBe('none');
    expect(d?.failure?.retryAfterMs).toBe(3 * MIN);
  });

  it('waits the whole wait when the renewal is later, or no job is served (its link cannot be renewed)', () => {
    for (const status of [serving(wait), serving(-MIN, null)]) {
      const d = startOutcomeUnknown.apply(platformCase(release({ status })));
      expect(d?.action.kind).toBe('none');
      expect(d?.failure?.retryAfterMs).toBe(wait - MIN);
    }
  });
});
