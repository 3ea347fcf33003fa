import { describe, expect, it } from 'vitest';
import { jobPolled } from '../../../../../src/controllers/static-export-release/export/export-in-flight.ts';
import type { ExportPoll } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { at, platformCase, release } from '../../../../support/fixtures/release-fixtures.ts';

type Answer = Extract<ExportPoll, { kind: 'job' }>;
const status = { observedGeneration: 1, export: { jobId: 'se_2', state: 'running', startedAt: at(-60_000) } };

describe('jobPolled', () => {
  it.each<[string, Answer, object, string[], string | undefined]>([
    [
      'completed: published',
      { kind: 'job', state: 'completed', pageCount: 3 },
      { kind: 'publish', mode: 'NewContent', jobId: 'se_2' },
      ['ExportCompleted'],
      undefined,
    ],
    [
      'failed: ends, nothing started',
      { kind: 'job', state: 'failed', error: 'boom' },
      { kind: 'none' },
      ['ExportFailed'],
      'Export job se_2 failed: boom; tried again at 2026-11-22T12:05:00.000Z (1 in a row without a publish: each doubles the wait, up to an hour or spec.interval)',
    ],
    [
      'running: polled again',
      { kind: 'job', state: 'running', progress: 40 },
      { kind: 'none' },
      [],
      undefined,
    ],
    [
      'a state not known yet: polled again',
      { kind: 'job', state: 'paused' },
      { kind: 'none' },
      [],
      undefined,
    ],
  ])('%s', (_, poll, action, events, message) => {
    const d = jobPolled(platformCase(release({ status })), 'se_2', poll);
    expect(d.action).toEqual(action);
    expect(d.events.map((e) => e.reason)).toEqual(events);
    expect(d.status.export?.state).toBe(poll.state);
    expect(d.status.export?.message).toBe(message);
  });
});
