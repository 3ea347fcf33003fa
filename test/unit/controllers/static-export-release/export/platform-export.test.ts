// The platform source: what it observes of the job in flight, the group and the target for each
// state of a release, and what its start does with the answer.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminApiClient,
  type ExportStatus,
  type GeneratedBundle,
  NetworkError,
  NotFoundError,
  RevisionUnavailableError,
  ServerError,
  type StartedExport,
} from '../../../../../src/api/index.ts';
import { failure } from '../../../../../src/controllers/failures.ts';
import type {
  PlatformObserved,
  Status,
} from '../../../../../src/controllers/static-export-release/release-model.ts';
import { shareKey } from '../../../../../src/controllers/static-export-release/share/shared-exports.ts';
import { closeLook } from '../../../../../src/controllers/static-export-release/sources/source.ts';
import { sourceFor } from '../../../../../src/controllers/static-export-release/sources/source-for.ts';
import type { StaticExportRelease } from '../../../../../src/crd/index.ts';
import { at, MIN, NOW, release, servingV1, V1 } from '../../../../support/fixtures/release-fixtures.ts';
import { act, decideAndClaim, lent, loaded } from '../sources/context.ts';

interface Answers {
  getExport?: () => Promise<ExportStatus>;
  startExport?: () => Promise<StartedExport>;
  generateBundle?: () => Promise<GeneratedBundle>;
}

/** The account's client: `calls` names each call made. */
function account(answers: Answers = {}) {
  const calls: string[] = [];
  const refuse = () => Promise.reject(new Error('not expected'));
  const client = {
    identity: 'acct',
    // The admin API on the bundle host's loopback address: links to it pass the destination policy.
    get baseUrl() {
      return bucket.base;
    },
    // The contract's revision (jobs named by id): a read is its GET, a link its bundle call.
    readExport: async ({ jobId }: { jobId: string }) => {
      calls.push(`getExport ${jobId}`);
      return { status: await (answers.getExport ?? refuse)() };
    },
    startExport: (req: { domain: string }) => {
      calls.push(`startExport ${req.domain}`);
      return (answers.startExport ?? refuse)();
    },
    exportLink: ({ jobId }: { jobId: string }) => {
      calls.push(`generateBundle ${jobId}`);
      return (answers.generateBundle ?? refuse)();
    },
  } as unknown as AdminApiClient;
  return { client, calls };
}

/**
 * The bundle host, on loopback: a link whose signature is `live` serves its first byte (206), any
 * other is refused as an object store refuses a dead link (403). `reads` counts the requests.
 */
const bucket = { base: '', reads: [] as string[] };
const server = createServer((req, res) => {
  bucket.reads.push(req.headers.range ?? '');
  const live = new URL(req.url ?? '/', 'http://x').searchParams.get('sig')?.startsWith('live');
  res.writeHead(live ? 206 : 403, live ? { 'content-range': 'bytes 0-0/100' } : {});
  res.end(live ? 'x' : '');
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bucket.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
const link = (sig: string) => `${bucket.base}/se_1.tar.gz?sig=${sig}`;

const exporting: Status = { export: { jobId: 'se_2', state: 'running', startedAt: at(-MIN) } };
const serverError = () => new ServerError('boom', { operation: 'getExport', status: 500 });

describe('the platform source observes', () => {
  it.each<[string, StaticExportRelease, Answers | undefined, Partial<PlatformObserved>, string[], number]>([
    // name, release, the account's answers (undefined: no usable key), observed, calls, Kubernetes reads
    ['nothing but the release without a usable key', release({ status: exporting }), undefined, {}, [], 0],
    [
      'the job in flight, polled',
      release({ status: exporting }),
      { getExport: async () => ({ status: 'running', progress: 40 }) as ExportStatus },
      { poll: { kind: 'job', state: 'running', progress: 40 } },
      ['getExport se_2'],
      0,
    ],
    [
      'a job the platform no longer has',
      release({ status: exporting }),
      { getExport: () => Promise.reject(new NotFoundError('gone', { operation: 'getExport', status: 404 })) },
      { poll: { kind: 'notFound' } },
      ['getExport se_2'],
      0,
    ],
    ['nothing served: the target is not read', release(), {}, { targetDrifted: false }, [], 0],
    [
      'a served version its values Secret no longer holds',
      release({ status: servingV1() }),
      {},
      { targetDrifted: true, workloads: [] },
      [],
      1,
    ],
    [
      'a workloadRef that does not exist',
      release({
        status: servingV1(),
        spec: { rollout: { workloadRefs: [{ kind: 'Deployment', name: 'site' }] } },
      }),
      {},
      { targetDrifted: true, workloads: [], missingWorkloads: [{ kind: 'Deployment', name: 'site' }] },
      [],
      2,
    ],
  ])('%s', async (_, r, answers, expected, calls, reads) => {
    const l = lent();
    const a = account(answers);
    const look = await sourceFor(l.ctx, r).observe(loaded(r, answers ? { client: a.client } : {}), undefined);
    const { source, now, release: seen, client, ...rest } = look.observed as PlatformObserved;
    expect({ source, client: client !== undefined }).toEqual({
      source: 'platform',
      client: answers !== undefined,
    });
    expect(rest).toEqual(expected);
    expect(a.calls).toEqual(calls);
    expect(l.reads).toHaveLength(reads);
    closeLook(look);
  });

  it('a failed poll as a failure to decide on, not an error', async () => {
    const r = release({ status: exporting });
    const a = account({ getExport: () => Promise.reject(serverError()) });
    const look = await sourceFor(lent().ctx, r).observe(loaded(r, { client: a.client }), undefined);
    expect(look.observed).toMatchObject({ poll: { kind: 'failed' } });
  });

  it('a problem found first, and calls nothing', async () => {
    const r = release({ status: exporting });
    const blocked = failure('SecretNotFound', 'no Secret', true);
    const look = await sourceFor(lent().ctx, r).observe(loaded(r, { blocked }), undefined);
    expect(look.observed).toMatchObject({ blocked });
    expect(decideAndClaim(look).action).toEqual({ kind: 'none' });
  });
});

describe('the platform source acts', () => {
  /** Observes `r` with the account, decides and acts on the decision. */
  async function decideAndAct(r: StaticExportRelease, answers: Answers) {
    const l = lent();
    const a = account(answers);
    const look = await sourceFor(l.ctx, r).observe(loaded(r, { client: a.client }), undefined);
    const d = decideAndClaim(look);
    const flightDecided = l.shared.flight(shareKey('acct', r.spec));
    const result = await act(l, look, d);
    closeLook(look);
    return { ...l, ...a, d, flightDecided, result, flight: l.shared.flight(shareKey('acct', r.spec)) };
  }

  it('claims its group as it decides to start, and records the job it started', async () => {
    const done = await decideAndAct(release(), {
      startExport: async () => ({ jobId: 'se_9', status: 'queued' }),
    });
    expect(done.d.action).toEqual({ kind: 'start', reason: 'Initial' });
    // Claimed: another release of the group waits for its job id instead of starting one.
    expect(done.flightDecided).toBeDefined();
    expect(done.flightDecided?.jobId).toBeUndefined();
    expect(done.calls).toEqual(['startExport docs.example.com']);
    expect(done.committed[0]?.status.export).toMatchObject({ jobId: 'se_9', state: 'queued' });
    expect(done.committed[0]?.status.start).toBeUndefined();
    // The group's other releases join it.
    expect(done.flight).toMatchObject({ jobId: 'se_9' });
    expect(done.result.requeueAfterMs).toBeGreaterThanOrEqual(0);
  });

  it.each<[string, Error, boolean]>([
    [
      'a start that never reached the platform drops its mark',
      new NetworkError('refused', { operation: 'startExport', beforeRequestSent: true }),
      false,
    ],
    ['a start the platform may have run keeps its mark', serverError(), true],
  ])('%s; the group is free to start again', async (_, error, marked) => {
    const done = await decideAndAct(release(), { startExport: () => Promise.reject(error) });
    expect(done.committed).toEqual([]);
    expect(done.failed).toHaveLength(1);
    expect(done.failed[0]?.status.start !== undefined).toBe(marked);
    expect(done.flight).toBeUndefined();
  });

  it('renews the served link: a fresh one, its first byte read, written to the values Secret, nothing downloaded', async () => {
    const live = link('live-1');
    const expiresAt = new Date(NOW.getTime() + 60 * MIN);
    const reads = bucket.reads.length;
    const done = await decideAndAct(release({ status: servingV1({}, { renewalTime: at(-MIN) }) }), {
      generateBundle: async () => ({ jobId: 'se_1', bundleUrl: live, expiresAt }),
    });
    expect(done.d.action).toEqual({ kind: 'publish', mode: 'Renew', jobId: 'se_1' });
    expect(done.calls).toEqual(['generateBundle se_1']);
    expect(bucket.reads.slice(reads)).toEqual(['bytes=0-0']);
    expect(done.created[0]?.data?.bundleUrl).toBe(Buffer.from(live).toString('base64'));
    expect(done.committed[0]?.status.current).toMatchObject({
      version: V1,
      expiresAt: expiresAt.toISOString(),
    });
    expect(done.committed[0]?.events.map((e) => e.reason)).toEqual(['LinkRenewed']);
    expect(done.result).toEqual({ requeueAfterMs: 0 });
  });

  it('refuses a link that arrives (nearly) expired: nothing written, BundleInvalid, asked again later', async () => {
    const done = await decideAndAct(release({ status: servingV1({}, { renewalTime: at(-MIN) }) }), {
      generateBundle: async () => ({
        jobId: 'se_1',
        bundleUrl: link('stale'),
        expiresAt: new Date(NOW.getTime() + 1_000),
      }),
    });
    expect(done.created).toHaveLength(0);
    expect(done.failed).toHaveLength(1);
    expect(done.failed[0]?.failure).toMatchObject({
      reason: 'BundleInvalid',
      stalled: false,
      retryAfterMs: 5 * MIN,
    });
    expect(done.failed[0]?.failure.message).toMatch(/already expired or within two seconds when it arrived/);
    expect(JSON.stringify(done.failed)).not.toContain('sig=stale');
  });
  describe('a renewed link that is dead before its expiresAt', () => {
    const renewing = release({ status: servingV1({}, { renewalTime: at(-MIN), expiresAt: at(9 * MIN) }) });
    const answers = (...sigs: string[]) => ({
      generateBundle: async () => ({
        jobId: 'se_1',
        bundleUrl: link(sigs.shift() ?? 'none'),
        expiresAt: new Date(NOW.getTime() + 60 * MIN),
      }),
    });

    it('is not written: one fresh link straight from the platform replaces it when that one is live', async () => {
      const done = await decideAndAct(renewing, answers('dead-1', 'live-3'));
      expect(done.calls).toEqual(['generateBundle se_1', 'generateBundle se_1']);
      expect(done.created[0]?.data?.bundleUrl).toBe(Buffer.from(link('live-3')).toString('base64'));
      expect(done.committed[0]?.events.map((e) => e.reason)).toEqual(['LinkRenewed']);
    });

    it("dead twice: nothing written, LinkRefused naming the served link's expiry, renewal asked again in a minute", async () => {
      const done = await decideAndAct(renewing, answers('dead-2', 'dead-3'));
      expect(done.created).toHaveLength(0);
      expect(done.committed).toEqual([]);
      expect(done.failed).toHaveLength(1);
      expect(done.failed[0]?.failure).toMatchObject({
        reason: 'LinkRefused',
        stalled: false,
        retryAfterMs: MIN,
      });
      expect(done.failed[0]?.failure.message).toMatch(
        /failed a one-byte read before it was written \(.*answered 403 to a one-byte read.*\), twice: it was not written, and the link written stays \(it expires at 2026-11-22T12:09:00.000Z\)/,
      );
      expect(done.result).toEqual({ requeueAfterMs: MIN });
      expect(JSON.stringify(done.failed)).not.toContain('sig=');
    });
  });

  describe("the served job's link answers 404", () => {
    const gone = () =>
      Promise.reject(new NotFoundError('no such job', { operation: 'generateBundle', status: 404 }));
    const due = servingV1({}, { renewalTime: at(-MIN), expiresAt: at(9 * MIN) });

    it('once: noted, the job kept, asked again a minute later; no new export yet', async () => {
      const done = await decideAndAct(release({ status: due }), { generateBundle: gone });
      expect(done.calls).toEqual(['generateBundle se_1']);
      expect(done.committed).toHaveLength(1);
      expect(done.committed[0]?.status.current).toMatchObject({
        jobId: 'se_1',
        jobMissingSince: NOW.toISOString(),
      });
      expect(done.committed[0]?.events).toEqual([]);
      expect(done.result).toEqual({ requeueAfterMs: 60_000 });
    });

    it('again a minute later: the job is dropped, and the Warning says when the link written expires', async () => {
      const noted = servingV1(
        {},
        { renewalTime: at(-2 * MIN), expiresAt: at(9 * MIN), jobMissingSince: at(-MIN) },
      );
      const done = await decideAndAct(release({ status: noted }), { generateBundle: gone });
      expect(done.committed[0]?.status.current?.jobId).toBeUndefined();
      expect(done.committed[0]?.status.current?.jobMissingSince).toBeUndefined();
      expect(done.committed[0]?.events).toEqual([
        expect.objectContaining({ type: 'Warning', reason: 'ExportVanished' }),
      ]);
      expect(done.committed[0]?.events[0]?.note).toContain(`The link written expires at ${at(9 * MIN)}`);
    });

    it('again sooner (another wake): not confirmed yet, looked at again when the minute is over', async () => {
      const noted = servingV1({}, { renewalTime: at(-2 * MIN), jobMissingSince: at(-20_000) });
      const done = await decideAndAct(release({ status: noted }), { generateBundle: gone });
      expect(done.committed).toEqual([]);
      expect(done.result).toEqual({ requeueAfterMs: 40_000 });
    });

    it('a fresh link after the first 404 clears the note', async () => {
      const noted = servingV1({}, { renewalTime: at(-2 * MIN), jobMissingSince: at(-MIN) });
      const done = await decideAndAct(release({ status: noted }), {
        generateBundle: async () => ({
          jobId: 'se_1',
          bundleUrl: link('live-2'),
          expiresAt: new Date(NOW.getTime() + 60 * MIN),
        }),
      });
      expect(done.committed[0]?.status.current).toMatchObject({ jobId: 'se_1' });
      expect(done.committed[0]?.status.current?.jobMissingSince).toBeUndefined();
    });

    it("no such endpoint (the revision is gone) is not a purged job: the served job stays, the error is the revision's", async () => {
      const done = await decideAndAct(release({ status: due }), {
        generateBundle: () =>
          Promise.reject(
            new RevisionUnavailableError('no such endpoint', { operation: 'generateBundle', status: 404 }),
          ),
      }).catch((e: unknown) => e);
      expect(done).toBeInstanceOf(RevisionUnavailableError);
    });
  });
});
