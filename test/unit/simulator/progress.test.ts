import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExportProgressModel, type Simulator, startSimulator } from '../../../src/simulator/index.ts';
import { call } from './helpers.ts';

// A virtual clock: the job's time passes only when the test says so.
let clock = Date.parse('2026-11-22T12:00:00Z');
let sim: Simulator;
const S = 1_000;
const DURATION = 90 * S;

beforeAll(async () => {
  sim = await startSimulator({ exportDurationMs: DURATION, clock: () => clock });
});
afterAll(() => sim.close());

/** Starts an export with `model` and reads its status at each of `times` (ms after the start). */
async function statusesAt(model: ExportProgressModel, times: number[]) {
  sim.configure({ exportProgress: model });
  const start = clock;
  const started = await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' });
  const seen = [];
  for (const t of times) {
    clock = start + t;
    seen.push((await call(sim, 'GET', `/v1/static-export/jobs/${String(started.json.jobId)}`)).json);
  }
  sim.configure({ exportProgress: 'linear' });
  return seen;
}

describe('simulator export progress models', () => {
  it('linear: queued for a tenth, then even progress to 99 %, completed at the end', async () => {
    const seen = await statusesAt('linear', [8 * S, 9 * S, 49.5 * S, 89.9 * S, DURATION]);
    expect(seen.map((s) => [s.status, s.progress])).toEqual([
      ['queued', undefined],
      ['running', 0],
      ['running', 50],
      ['running', 99],
      ['completed', 100],
    ]);
    // The platform's timestamps give the export's duration to the millisecond.
    const done = seen.at(-1) ?? {};
    expect(Date.parse(String(done.updatedAt)) - Date.parse(String(done.createdAt))).toBe(DURATION);
  });

  it('stall: 90 % at two thirds of the duration, held there for the last third', async () => {
    const seen = await statusesAt('stall', [30 * S, 60 * S, 75 * S, 89.9 * S, DURATION]);
    expect(seen.map((s) => [s.status, s.progress])).toEqual([
      ['running', 37],
      ['running', 90],
      ['running', 90],
      ['running', 90],
      ['completed', 100],
    ]);
  });

  it('none: running without progress or page count until completed', async () => {
    const seen = await statusesAt('none', [50 * S, DURATION]);
    expect(seen[0]).toMatchObject({ status: 'running' });
    expect(seen[0]).not.toHaveProperty('progress');
    expect(seen[0]).not.toHaveProperty('pageCount');
    expect(seen[1]).toMatchObject({ status: 'completed', progress: 100 });
  });

  it('a model set later leaves exports already started as they were', async () => {
    const started = await call(sim, 'POST', '/v1/static-export/jobs', { domain: 'docs.acme.dev' });
    sim.configure({ exportProgress: 'none' });
    clock += 50 * S;
    const mid = await call(sim, 'GET', `/v1/static-export/jobs/${String(started.json.jobId)}`);
    sim.configure({ exportProgress: 'linear' });
    expect(mid.json.progress).toBe(50);
  });
});
