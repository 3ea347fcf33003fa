// One export per site at a time, on the real control plane against the simulator: a staging and a
// production release of one site (two namespaces, two Secrets holding the same key) share one
// export job, one bundle link and one download; a trigger on either re-exports both; releases
// whose export options differ never share; an operator restart mid-export keeps them on one job.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import type { RecordedRequest } from '../../../src/simulator/index.ts';
import { eventsFor, eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { applyRelease, applySecret, getRelease } from '../../support/cluster/resources.ts';

const h = useOperatorSuite({
  namespaces: ['share-prod', 'share-staging'],
  // Long enough to apply a second release while the first one's export runs.
  sim: { exportDurationMs: 4_000 },
  // The simulator by another name: the same key there is another account (never shared with).
  // The other account's API (localhost) hands out links to the simulator's 127.0.0.1: not its own
  // host, so a private mirror's opt-in lets the operator follow them.
  operator: (sim) => ({
    allowedApiBaseUrls: [otherAccountUrl(sim.baseUrl)],
    download: { allowPrivateLinks: true },
  }),
  adminKeySecret: null,
});
const prod = () => h.namespaces[0];
const staging = () => h.namespaces[1];

beforeAll(async () => {
  // The same key in two Secrets of different names: compared by content, not by reference.
  await applySecret(prod(), 'admin-key', { apiKey: h.sim.adminKey });
  await applySecret(staging(), 'platform-key', { apiKey: h.sim.adminKey });
});

const otherAccountUrl = (baseUrl: string) => baseUrl.replace('127.0.0.1', 'localhost');

const stagingSpec = (domain: string, extra: Record<string, unknown> = {}) => ({
  domain,
  credentialsSecretRef: { name: 'platform-key' },
  ...extra,
});

const readyOf = (r: StaticExportRelease) => r.status?.conditions?.find((c) => c.type === 'Ready');

async function until(ns: string, name: string, what: string, test: (r: StaticExportRelease) => boolean) {
  return eventually(`${ns}/${name}: ${what}`, async () => {
    const r = await getRelease(ns, name);
    return test(r) ? r : undefined;
  });
}

/** Simulator requests of one kind since a mark (`h.sim.requests.length` then). */
const calls = (since: number, endpoint: RecordedRequest['endpoint']) =>
  h.sim.requests.slice(since).filter((r) => r.endpoint === endpoint).length;

async function versionIn(ns: string, secret: string): Promise<string> {
  const s = JSON.parse(await kubectlOk(['get', 'secret', secret, '-n', ns, '-o', 'json'])) as {
    data: Record<string, string>;
  };
  return (
    parse(Buffer.from(s.data['values.yaml'] ?? '', 'base64').toString()) as {
      staticExport: { version: string };
    }
  ).staticExport.version;
}

describe('one export per site at a time', () => {
  it('a release of the same site and key in another namespace joins the job in flight: one start, one link, one download', async () => {
    const mark = h.sim.requests.length;
    const started = h.sim.exportJobsStarted();
    await applyRelease(prod(), 'docs', { domain: 'join.example.com' });
    const first = await until(prod(), 'docs', 'export started', (r) => Boolean(r.status?.export?.jobId));
    const jobId = first.status?.export?.jobId;
    await applyRelease(staging(), 'docs', stagingSpec('join.example.com'));

    const joined = await until(staging(), 'docs', 'joined', (r) => r.status?.export?.jobId === jobId);
    expect(joined.status?.export?.joined).toBe(true);
    expect(first.status?.export?.joined).toBeUndefined();

    const [p, s] = await Promise.all([
      until(prod(), 'docs', 'Ready', (r) => readyOf(r)?.status === 'True'),
      until(staging(), 'docs', 'Ready', (r) => readyOf(r)?.status === 'True'),
    ]);
    expect(h.sim.exportJobsStarted() - started).toBe(1);
    expect(s.status?.current?.jobId).toBe(jobId);
    expect(s.status?.current?.version).toBe(p.status?.current?.version);
    expect(await versionIn(staging(), 'docs-values')).toBe(p.status?.current?.version);
    expect(await versionIn(prod(), 'docs-values')).toBe(p.status?.current?.version);
    // The platform was asked once for the link and the operator downloaded the bundle once.
    expect(calls(mark, 'start')).toBe(1);
    expect(calls(mark, 'bundle')).toBe(1);
    expect(calls(mark, 'download')).toBe(1);
    expect((await eventsFor(staging(), 'docs')).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['ExportJoined', 'Published']),
    );
    expect((await eventsFor(staging(), 'docs')).map((e) => e.reason)).not.toContain('ExportStarted');
    // The key is compared by digest: neither it nor anything naming the other namespace's Secret is logged.
    expect(h.logs.join('\n')).not.toContain(h.sim.adminKey);
  });

  it('a trigger on either release starts one new export, which both publish', async () => {
    const before = await getRelease(prod(), 'docs');
    const started = h.sim.exportJobsStarted();
    const mark = h.sim.requests.length;
    await kubectlOk([
      'annotate',
      'ser',
      'docs',
      '-n',
      staging(),
      '--overwrite',
      'staticexport.dev/requested-at=refresh-1',
    ]);
    const s = await until(
      staging(),
      'docs',
      'trigger handled',
      (r) =>
        r.status?.lastHandledRequestedAt === 'refresh-1' &&
        r.status.export?.jobId !== before.status?.export?.jobId &&
        Boolean(r.status.export?.finishedAt),
    );
    const p = await until(
      prod(),
      'docs',
      'joined the new export and finished it',
      (r) => r.status?.export?.jobId === s.status?.export?.jobId && Boolean(r.status?.export?.finishedAt),
    );
    expect(h.sim.exportJobsStarted() - started).toBe(1);
    expect(calls(mark, 'start')).toBe(1);
    // Started by the staging release this time: production joined it.
    expect(p.status?.export?.joined).toBe(true);
    expect(s.status?.export?.joined).toBeUndefined();
    // Identical content: both keep their version.
    expect(p.status?.current?.version).toBe(before.status?.current?.version);
  });

  it('releases whose export options differ never share a job', async () => {
    const started = h.sim.exportJobsStarted();
    await applyRelease(prod(), 'labelled', { domain: 'options.example.com' });
    await until(prod(), 'labelled', 'export started', (r) => Boolean(r.status?.export?.jobId));
    await applyRelease(
      staging(),
      'labelled',
      stagingSpec('options.example.com', { export: { versionLabel: 'staging-preview' } }),
    );
    const [p, s] = await Promise.all([
      until(prod(), 'labelled', 'Ready', (r) => readyOf(r)?.status === 'True'),
      until(staging(), 'labelled', 'Ready', (r) => readyOf(r)?.status === 'True'),
    ]);
    expect(h.sim.exportJobsStarted() - started).toBe(2);
    expect(s.status?.current?.jobId).not.toBe(p.status?.current?.jobId);
    expect(s.status?.export?.joined).toBeUndefined();
    expect(h.sim.exportJob(s.status?.current?.jobId ?? '')?.domain).toBe('options.example.com');
  });

  it('an operator restart with a shared job in flight: both resume the same job, nothing is started again', async () => {
    const started = h.sim.exportJobsStarted();
    const mark = h.sim.requests.length;
    // Both at once: one of them starts, the other waits for its job id and joins.
    await Promise.all([
      applyRelease(prod(), 'restart', { domain: 'restart.example.com' }),
      applyRelease(staging(), 'restart', stagingSpec('restart.example.com')),
    ]);
    const p = await until(prod(), 'restart', 'exporting', (r) => Boolean(r.status?.export?.jobId));
    const jobId = p.status?.export?.jobId;
    await until(staging(), 'restart', 'on the same job', (r) => r.status?.export?.jobId === jobId);
    expect(h.sim.exportJobsStarted() - started).toBe(1);
    expect(h.sim.exportJob(jobId ?? '')?.status).not.toBe('completed');

    await h.restartOperator(0);
    const [rp, rs] = await Promise.all([
      until(prod(), 'restart', 'Ready', (r) => readyOf(r)?.status === 'True'),
      until(staging(), 'restart', 'Ready', (r) => readyOf(r)?.status === 'True'),
    ]);
    expect(rp.status?.current?.jobId).toBe(jobId);
    expect(rs.status?.current?.jobId).toBe(jobId);
    expect(h.sim.exportJobsStarted() - started).toBe(1);
    expect(calls(mark, 'start')).toBe(1);
    expect(calls(mark, 'download')).toBe(1);
  });

  it('a release created while the operator is down joins the job in flight another release records, even when it is reconciled first', async () => {
    const started = h.sim.exportJobsStarted();
    const mark = h.sim.requests.length;
    await applyRelease(prod(), 'downtime', { domain: 'downtime.example.com' });
    const p = await until(prod(), 'downtime', 'exporting', (r) => Boolean(r.status?.export?.jobId));
    const jobId = p.status?.export?.jobId ?? '';
    expect(h.sim.exportJob(jobId)?.status).not.toBe('completed');

    // Only the production release's status knows the job when the new operator starts; the staging
    // release, new to it, is reconciled at once (no job of its own to poll first).
    await h.restartOperator(0, () =>
      applyRelease(staging(), 'downtime', stagingSpec('downtime.example.com')),
    );
    const s = await until(staging(), 'downtime', 'Ready', (r) => readyOf(r)?.status === 'True');
    const rp = await until(prod(), 'downtime', 'Ready', (r) => readyOf(r)?.status === 'True');
    expect(s.status?.current?.jobId).toBe(jobId);
    expect(s.status?.export?.joined).toBe(true);
    expect(rp.status?.current?.jobId).toBe(jobId);
    expect(h.sim.exportJobsStarted() - started).toBe(1);
    expect(calls(mark, 'start')).toBe(1);
    expect((await eventsFor(staging(), 'downtime')).map((e) => e.reason)).toContain('ExportJoined');
    expect((await eventsFor(staging(), 'downtime')).map((e) => e.reason)).not.toContain('ExportStarted');
  });

  it('after a restart, a job in flight recorded by a release of another account or other options is never joined', async () => {
    const started = h.sim.exportJobsStarted();
    await applyRelease(prod(), 'apart', { domain: 'apart.example.com' });
    const p = await until(prod(), 'apart', 'exporting', (r) => Boolean(r.status?.export?.jobId));
    const jobId = p.status?.export?.jobId;

    await h.restartOperator(0, async () => {
      await applyRelease(
        staging(),
        'apart-options',
        stagingSpec('apart.example.com', { export: { versionLabel: 'preview' } }),
      );
      await applyRelease(
        staging(),
        'apart-account',
        stagingSpec('apart.example.com', { apiBaseUrl: otherAccountUrl(h.sim.baseUrl) }),
      );
    });
    const others = await Promise.all(
      ['apart-options', 'apart-account'].map((n) =>
        until(staging(), n, 'Ready', (r) => readyOf(r)?.status === 'True'),
      ),
    );
    await until(prod(), 'apart', 'Ready', (r) => readyOf(r)?.status === 'True');
    for (const r of others) {
      expect(r.status?.current?.jobId).not.toBe(jobId);
      expect(r.status?.export?.joined).toBeUndefined();
    }
    expect(h.sim.exportJobsStarted() - started).toBe(3);
  });
});
