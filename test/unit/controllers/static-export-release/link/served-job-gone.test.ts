// A purged served job cannot have its link renewed: its replacement export must come before the
// link expires, so it goes ahead of the scheduled starts of its start budget group, as a request does.

import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../../../src/api/index.ts';
import { StartBudgets } from '../../../../../src/controllers/static-export-release/budget/start-budget.ts';
import { startAsk } from '../../../../../src/controllers/static-export-release/export/join-or-start.ts';
import {
  afterServedJobGone,
  foldJobMissing,
} from '../../../../../src/controllers/static-export-release/link/served-job-gone.ts';
import { DEFAULT_TUNABLES } from '../../../../../src/controllers/static-export-release/release-model.ts';
import { at, MIN, NOW, release, servingV1, V1 } from '../../../../support/fixtures/release-fixtures.ts';

const HOUR = 60 * MIN;
const PROJECT = { domain: undefined, projectId: '6520f3a1c9b1a20012ab34cd' };

describe("a purged served job's replacement", () => {
  const purged = () => {
    const r = release({
      spec: { ...PROJECT, interval: '1h' },
      status: servingV1({}, { expiresAt: at(20 * MIN) }),
    });
    return { ...r, status: afterServedJobGone({ now: NOW, release: r }).status };
  };

  it('asks for its start ahead of the scheduled ones', () => {
    expect(startAsk(purged(), NOW, DEFAULT_TUNABLES)).toMatchObject({ requested: true });
  });

  it('takes the first slot of a busy group, before the interval starts that waited longer', () => {
    const budgets = new StartBudgets({ now: () => NOW.getTime() });
    // The hour is spent: the first slot comes free in 10 minutes (the oldest start leaves the window).
    for (let i = 0; i < 10; i++)
      budgets.recordPast('org', `web/other-${i}`, NOW.getTime() - 50 * MIN + i * MIN);
    // Two interval starts have waited for a quarter of an hour.
    for (const name of ['web/a', 'web/b']) {
      budgets.declare(name, 'org', { intervalMs: HOUR, lastStart: NOW.getTime() - 75 * MIN });
      budgets.wait('org', name, {
        dueAt: NOW.getTime() - 15 * MIN,
        requested: false,
        lastStart: NOW.getTime() - 75 * MIN,
      });
    }
    const r = purged();
    budgets.declare('web/docs', 'org', { intervalMs: HOUR, lastStart: NOW.getTime() - 60 * MIN });
    const slot = budgets.view('org', 'web/docs').slotAt(startAsk(r, NOW, DEFAULT_TUNABLES), NOW.getTime());
    expect(slot).toBe(NOW.getTime() + 10 * MIN);
    // Before the link expires (in 20 minutes); as an interval start it would come third.
    expect(slot).toBeLessThan(Date.parse(at(20 * MIN)));
  });

  it('warns with the expiry of the link written', () => {
    const r = release({ spec: PROJECT, status: servingV1({}, { expiresAt: at(20 * MIN) }) });
    const f = afterServedJobGone({ now: NOW, release: r });
    expect(f.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ExportVanished' })]);
    expect(f.events[0]?.note).toMatch(
      new RegExp(
        `ahead of the scheduled starts\\. The link written expires at ${at(20 * MIN).replace(/\./g, '\\.')}: a pod started after that cannot download`,
      ),
    );
  });
});

describe('foldJobMissing', () => {
  const gone = new NotFoundError('no such job', { operation: 'generateBundle', status: 404 });
  const noted = (sinceMs: number, spec: object = {}) =>
    release({
      spec,
      status: servingV1({}, { jobMissingSince: new Date(NOW.getTime() - sinceMs).toISOString() }),
    });

  it('a 404 noted a moment ago: asked again once the confirmation delay has passed', () => {
    expect(foldJobMissing({ now: NOW, release: noted(10_000) }, 'se_1', gone, DEFAULT_TUNABLES)).toEqual({
      kind: 'wait',
      requeueAfterMs: DEFAULT_TUNABLES.jobGoneConfirmMs - 10_000,
    });
  });

  it('confirmed: the job is forgotten and the release exports anew', () => {
    const step = foldJobMissing({ now: NOW, release: noted(2 * MIN) }, 'se_1', gone, DEFAULT_TUNABLES);
    expect(step).toMatchObject({ kind: 'commit', requeueAfterMs: 0, events: [{ reason: 'ExportVanished' }] });
    if (step.kind === 'commit') expect(step.status.current?.jobId).toBeUndefined();
  });

  it('confirmed for a pin: stalled, only the user can choose another version', () => {
    const step = foldJobMissing(
      { now: NOW, release: noted(2 * MIN, { pinnedVersion: V1 }) },
      'se_1',
      gone,
      DEFAULT_TUNABLES,
    );
    expect(step).toMatchObject({
      kind: 'fail',
      failure: { reason: 'PinnedJobGone', stalled: true },
      cause: gone,
    });
  });
});
