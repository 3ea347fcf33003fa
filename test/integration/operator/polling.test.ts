// How often the operator polls an export job on the real control plane: the schedule of
// src/api/poll-schedule.ts, fed by status (progress samples, previous durations), seen in the
// simulator's request log.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, getRelease, requestExport } from '../../support/cluster/resources.ts';

const EXPORT_MS = 4_000;
const h = useOperatorSuite({ namespaces: ['polling'], sim: { exportDurationMs: EXPORT_MS } });

/** Ready, with an export other than `jobId` finished (identical content keeps status.current). */
const published = (jobId?: string) => (r: StaticExportRelease) =>
  r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true &&
  r.status.export?.finishedAt !== undefined &&
  r.status.export.jobId !== jobId;

const until = (test: (r: StaticExportRelease) => boolean, what: string) =>
  eventually(what, async () => {
    const r = await getRelease(h.ns, 'site');
    return test(r) ? r : undefined;
  });

describe('export polling', () => {
  it('polls by progress, records how long the export took, and first looks at the next one when it should end', async () => {
    await applyRelease(h.ns, 'site');
    const first = await until(published(), 'first export published');
    const firstJob = first.status?.export?.jobId ?? '';
    const took = first.status?.exportDurationsSeconds ?? [];
    expect(took).toHaveLength(1);
    expect(took[0]).toBeGreaterThanOrEqual(EXPORT_MS / 1000);
    expect(took[0]).toBeLessThan(EXPORT_MS / 1000 + 1.5);
    // The progress the polls saw is in status (the first value and the latest changes).
    expect(first.status?.export?.progressSamples?.length).toBeGreaterThanOrEqual(1);
    // Nothing was known: a first look after a second, whose progress (measured from the start)
    // points to the end, then that end. A fixed one-second interval would have made 4-5 calls.
    const firstStart = h.sim.requests.find((r) => r.endpoint === 'start')?.time ?? 0;
    const firstPolls = h.sim.requests
      .filter((r) => r.path.endsWith(`/jobs/${firstJob}`))
      .map((r) => r.time - firstStart);
    expect(firstPolls[0]).toBeGreaterThanOrEqual(900);
    expect(firstPolls.length).toBeLessThanOrEqual(3);

    await requestExport(h.ns, 'site', '2');
    const second = await until(published(firstJob), 'second export published');
    const secondJob = second.status?.export?.jobId ?? '';
    expect(second.status?.exportDurationsSeconds).toHaveLength(2);
    const started = h.sim.requests.filter((r) => r.endpoint === 'start').at(-1)?.time ?? 0;
    const polls = h.sim.requests
      .filter((r) => r.path.endsWith(`/jobs/${secondJob}`))
      .map((r) => r.time - started);
    // The site's previous export took about 4 s: the first look is then, and it is done.
    expect(polls[0]).toBeGreaterThanOrEqual(EXPORT_MS - 500);
    expect(polls.length).toBeLessThanOrEqual(2);
  });
});
