// The platform's current export API (spec.projectId) end to end: the real control plane, the
// operator in this process and the simulator in revision 2 through the production client. The
// happy path, renewal by GET, the shared hourly start budget (also across a restart), and the
// hostile answers: 409 forever, 429 without Retry-After, a completed job without its link, a link
// already expired, a recorded job the platform no longer has. Each gives a clear condition and no
// second start.
import { describe, expect, it } from 'vitest';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventsFor, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, untilRelease } from '../../support/cluster/resources.ts';

// 24 hex characters, as the vendor's project ids; one per test so their jobs never meet.
const project = (n: number) => `6520f3a1c9b1a20012ab${String(n).padStart(4, '0')}`;

const h = useOperatorSuite({
  namespaces: ['current'],
  sim: { apiRevision: 2, exportDurationMs: 500, linkTtlSeconds: 30, unknownProjects: [project(30)] },
  // A served job's 404 is confirmed by a second one this much later (a minute by default).
  operator: { tunables: { jobGoneConfirmMs: 3_000 } },
});

const release = (name: string, projectId: string, spec: Record<string, unknown> = {}) =>
  applyRelease(h.ns, name, { domain: undefined, projectId, ...spec });
const condition = (r: StaticExportRelease, type: string) =>
  r.status?.conditions?.find((c) => c.type === type);

/** Requests of the simulator for one project's export endpoints, as `endpoint status`. */
const calls = (projectId: string) =>
  h.sim.requests
    .filter((r) => r.path.startsWith(`/v1/static-export/${projectId}/`))
    .map((r) => `${r.endpoint} ${r.status}`);
const starts = (projectId: string) => calls(projectId).filter((c) => c.startsWith('start '));

/** The bundle link in the release's values Secret (the chart's `bundleUrl` key). */
async function linkIn(name: string): Promise<string> {
  const s = JSON.parse(await kubectlOk(['get', 'secret', `${name}-values`, '-n', h.ns, '-o', 'json'])) as {
    data: Record<string, string>;
  };
  return Buffer.from(s.data.bundleUrl ?? '', 'base64').toString();
}

const waitFor = (name: string, what: string, test: (r: StaticExportRelease) => boolean, ms?: number) =>
  untilRelease(h.ns, name, what, test, ms);
const readyReason = (reason: string) => (r: StaticExportRelease) => condition(r, 'Ready')?.reason === reason;
const reconcilingReason = (reason: string) => (r: StaticExportRelease) =>
  condition(r, 'Reconciling')?.reason === reason;

describe('a release of the current export API', () => {
  it('exports by project, publishes from the completed GET and renews the link with one GET, never a start', async () => {
    const p = project(1);
    await release('site', p, { basePath: '/docs' });
    const served = await waitFor('site', 'published', readyReason('Published'));
    expect(served.status?.current).toMatchObject({ projectId: p });
    expect(served.status?.history?.[0]).toMatchObject({ projectId: p });
    expect(served.status?.recentStarts).toHaveLength(1);
    const job = h.sim.exportJob(served.status?.current?.jobId ?? '');
    expect(job?.basePath).toBe('/docs');
    // The poll that saw the job complete carried the link: no second GET to publish it.
    const polls = calls(p).length;

    // A 30 s link renews at 20 s: one GET, no start, the link written anew.
    const renewed = await waitFor(
      'site',
      'renewed',
      (r) => r.status?.current?.renewedAt !== undefined,
      40_000,
    );
    expect(calls(p).slice(polls)).toEqual(['status 200']);
    expect(starts(p)).toEqual(['start 202']);
    expect(renewed.status?.current?.expiresAt).not.toBe(served.status?.current?.expiresAt);
    // Neither status nor events ever hold a link.
    const text = JSON.stringify([renewed.status, await eventsFor(h.ns, 'site')]);
    expect(text).not.toMatch(/X-Amz|signature|bundles\//i);
  });

  it('refuses a release naming both a domain and a project, naming both fields', async () => {
    await expect(applyRelease(h.ns, 'both', { projectId: project(2) })).rejects.toThrow(
      /exactly one of spec\.projectId .* or spec\.domain/,
    );
    await expect(
      release('basepath-v1', project(2), {
        projectId: undefined,
        domain: 'docs.example.com',
        basePath: '/docs',
      }),
    ).rejects.toThrow(/spec\.basePath and spec\.startBudget belong to the current export API/);
  });

  it('409 forever (a job started elsewhere): ExportBusy, waited out, one start, nothing failed', async () => {
    const p = project(3);
    h.sim.configure({ faults: [`start@${p}:409:1`] });
    try {
      await release('busy', p);
      const r = await waitFor('busy', 'ExportBusy', reconcilingReason('ExportBusy'));
      expect(condition(r, 'Reconciling')?.message).toMatch(/one job per deployment may be active \(409\)/);
      expect(condition(r, 'Stalled')?.status).not.toBe('True');
      expect(r.status?.waiting?.reason).toBe('ExportBusy');
      // At least 20 minutes before the next try (at most 3 requests an hour meet a project's 409),
      // and the 409 is counted like a start.
      expect(Date.parse(r.status?.waiting?.until ?? '') - Date.now()).toBeGreaterThan(19 * 60_000);
      expect(r.status?.recentStarts).toHaveLength(1);
      await new Promise((res) => setTimeout(res, 3_000));
      expect(starts(p)).toEqual(['start 409']);
    } finally {
      h.sim.configure({ faults: [] });
    }
  });

  it('a completed job without its link: a clear condition naming the field, one start', async () => {
    const p = project(5);
    h.sim.configure({ faults: [`status@${p}:nolink:1`] });
    try {
      await release('nolink', p);
      const r = await waitFor('nolink', 'ApiUnavailable', readyReason('ApiUnavailable'));
      expect(condition(r, 'Ready')?.message).toMatch(/completed job without a usable "bundleUrl"/);
      expect(starts(p)).toEqual(['start 202']);
    } finally {
      h.sim.configure({ faults: [] });
    }
  });

  it('a link already expired when it arrives: BundleInvalid, nothing published, one start', async () => {
    const p = project(6);
    h.sim.configure({ linkTtlSeconds: 0 });
    try {
      await release('expired', p);
      const r = await waitFor('expired', 'BundleInvalid', readyReason('BundleInvalid'));
      expect(condition(r, 'Ready')?.message).toMatch(/already expired or within two seconds when it arrived/);
      expect(r.status?.current?.version).toBeUndefined();
      expect(starts(p)).toEqual(['start 202']);
    } finally {
      h.sim.configure({ linkTtlSeconds: 30 });
    }
  });

  it("a single 404 for the served job's link is asked again, not taken for a purge: renewed, no start", async () => {
    const p = project(9);
    await release('blip', p);
    const served = await waitFor('blip', 'published', readyReason('Published'));
    h.sim.configure({ faults: [`status@${p}:404:1:1`] });
    try {
      const renewed = await waitFor(
        'blip',
        'renewed',
        (r) => r.status?.current?.renewedAt !== undefined,
        60_000,
      );
      expect(calls(p)).toContain('status 404');
      expect(renewed.status?.current?.jobId).toBe(served.status?.current?.jobId);
      expect(renewed.status?.current?.jobMissingSince).toBeUndefined();
      expect(starts(p)).toEqual(['start 202']);
      expect((await eventsFor(h.ns, 'blip')).map((e) => e.reason)).not.toContain('ExportVanished');
    } finally {
      h.sim.configure({ faults: [] });
    }
  });

  it('a recorded job the platform purged: unpinned, one budgeted start; pinned, PinnedJobGone and no start', async () => {
    const [free, pinned] = [project(7), project(8)];
    await release('purged', free);
    await release('pinned', pinned);
    const first = await waitFor('purged', 'published', readyReason('Published'));
    const served = await waitFor('pinned', 'published', readyReason('Published'));
    await release('pinned', pinned, { pinnedVersion: served.status?.current?.version });
    // Each job is gone for its next reads: the renewal (at 20 s of a 30 s link) meets a 404, and
    // so does the second look that confirms it.
    h.sim.configure({ faults: [`status@${free}:404:1:2`, `status@${pinned}:404:1`] });
    try {
      const [again, stuck] = await Promise.all([
        waitFor(
          'purged',
          'published anew',
          (r) =>
            (r.status?.history?.length ?? 0) >= 1 && starts(free).length === 2 && readyReason('Published')(r),
          60_000,
        ),
        waitFor('pinned', 'PinnedJobGone', readyReason('PinnedJobGone'), 60_000),
      ]);
      const vanished = (await eventsFor(h.ns, 'purged')).find((e) => e.reason === 'ExportVanished');
      expect(vanished?.note).toMatch(/The link written expires at \d{4}-\d\d-\d\dT/);
      expect(again.status?.current?.jobId).not.toBe(first.status?.current?.jobId);
      expect(condition(stuck, 'Stalled')?.status).toBe('True');
      expect(condition(stuck, 'Ready')?.message).toMatch(/pods keep serving what they have/);
      expect(stuck.status?.current?.version).toBe(served.status?.current?.version);
      expect(starts(pinned)).toEqual(['start 202']);
      expect(starts(free)).toEqual(['start 202', 'start 202']);
    } finally {
      h.sim.configure({ faults: [] });
    }
  });

  it('an unknown project: ProjectNotFound, Stalled, one start and no retry loop; acted on when the spec names a project', async () => {
    const [wrong, right] = [project(30), project(31)];
    await release('typo', wrong);
    const stalled = await waitFor('typo', 'ProjectNotFound', readyReason('ProjectNotFound'));
    expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'ProjectNotFound' });
    expect(condition(stalled, 'Ready')?.message).toMatch(/spec\.projectId/);
    // Not a transient outage: no backoff loop of starts (ApiUnavailable retried within seconds).
    await new Promise((r) => setTimeout(r, 5_000));
    expect(starts(wrong)).toEqual(['start 404']);
    await release('typo', right);
    await waitFor('typo', 'published', readyReason('Published'));
    expect(starts(right)).toEqual(['start 202']);
  });

  it('a renewed link that is dead before its expiresAt is not written: LinkRefused, the old link stays; renewed once the bucket serves again', async () => {
    const p = project(32);
    await release('deadlink', p);
    const served = await waitFor('deadlink', 'published', readyReason('Published'));
    const written = await linkIn('deadlink');
    // Every download of this project's jobs is refused as an object store refuses a dead link.
    h.sim.configure({ faults: [`download@${p}:403:1`] });
    try {
      const refused = await waitFor('deadlink', 'LinkRefused', readyReason('LinkRefused'), 40_000);
      expect(condition(refused, 'Ready')?.message).toMatch(
        new RegExp(
          `the link written stays \\(it expires at ${served.status?.current?.expiresAt?.replace(/\./g, '\\.')}\\)`,
        ),
      );
      expect(refused.status?.current?.expiresAt).toBe(served.status?.current?.expiresAt);
      expect(await linkIn('deadlink')).toBe(written);
      // Two fresh links asked for (the handed-out one and one straight from the platform), each tried once.
      const tried = h.sim.requests.filter((r) => r.endpoint === 'download' && r.status === 403);
      expect(tried.length).toBeGreaterThanOrEqual(2);
      expect(starts(p)).toEqual(['start 202']);
    } finally {
      h.sim.configure({ faults: [] });
    }
    const renewed = await waitFor(
      'deadlink',
      'renewed',
      (r) => r.status?.current?.renewedAt !== undefined,
      90_000,
    );
    expect(await linkIn('deadlink')).not.toBe(written);
    expect(readyReason('Published')(renewed)).toBe(true);
  });
});
