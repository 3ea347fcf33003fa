// docs/gitops.md's table of the conditions kstatus and Argo CD read, against the operator: the
// StaticExportRelease's `Reconciling` row names every reason the operator gives it, taken from the
// conditions it computes for each thing a release can have under way (an export running, each wait
// before a start, a rollout, a sync).
import { describe, expect, it } from 'vitest';
import { releaseConditions } from '../../../src/controllers/static-export-release/release-conditions.ts';
import { type StaticExportRelease, staticExportReleaseCrd } from '../../../src/crd/static-export-release.ts';
import { codeSpans, readRepoFile, sectionRows } from '../../support/fixtures/markdown.ts';
import { release } from '../../support/fixtures/release-fixtures.ts';

type Status = NonNullable<StaticExportRelease['status']>;

const NOW = new Date('2026-01-01T00:00:00Z');
const AT = NOW.toISOString();
const LATER = new Date(NOW.getTime() + 60_000).toISOString();
const VERSION = `sha256-${'ab'.repeat(32)}`;

/** The reasons a release's status may wait with, as the CRD's schema allows them. */
const WAITING_REASONS = staticExportReleaseCrd.status.shape.waiting.unwrap().shape.reason.options;

const rollout = (via?: 'Sync'): Status =>
  ({
    current: {
      version: VERSION,
      rollout: { version: VERSION, ...(via ? { via } : {}), startedAt: AT, workloads: [] },
    },
  }) as unknown as Status;

const UNDER_WAY: Status[] = [
  { export: { jobId: 'se_1', state: 'running', startedAt: AT } } as unknown as Status,
  ...WAITING_REASONS.map(
    (reason) => ({ waiting: { reason, since: AT, until: LATER, message: 'waits' } }) as Status,
  ),
  rollout(),
  rollout('Sync'),
];

describe('docs/gitops.md', () => {
  it("names every reason of a StaticExportRelease's Reconciling condition", () => {
    const reasons = UNDER_WAY.map((status) => {
      const conditions = releaseConditions(release({ status }), status, undefined, NOW).conditions ?? [];
      return conditions.find((c) => c.type === 'Reconciling' && c.status === 'True')?.reason;
    });
    expect(reasons).not.toContain(undefined);
    const row = sectionRows(readRepoFile('docs/gitops.md'), 'Status in Flux, Argo CD and kstatus').find(
      (r) => codeSpans(r[0] ?? '')[0] === 'Reconciling',
    );
    const documented = codeSpans(row?.[1] ?? '');
    expect(reasons.filter((r) => !documented.includes(r ?? ''))).toEqual([]);
  });
});
