import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNABLES, type Status } from '../../../../src/controllers/static-export-release/model.ts';
import {
  startOutcomeUnknown,
  withoutExpiredStart,
} from '../../../../src/controllers/static-export-release/rules/start-outcome-unknown.ts';
import { at, MIN, NOW, platformCase, release } from '../../../support/release-fixtures.ts';

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
