// Admin API calls spent polling one export, and how late its completion is seen: the operator's
// own decisions (decide-release.ts and the schedule of src/api/poll-schedule.ts, status carried from one
// poll to the next as the reconciler writes it) against the platform's sample, which polls every
// 10 s. Both talk to the simulator through the production client; the simulator runs on a virtual
// clock that the pollers advance, so a 30-minute export takes a moment. Exports of 20 s, 2, 10
// and 30 min, with linear progress, progress that stalls at 90 % for the last third, and none.
// "first": nothing known of the site (also what the CLI does); "repeat": the site's previous
// export (the first one) is in status. Calls are status calls (start and bundle are the same for all).
// Goals (issue 12, for its two models, linear and stall): ≤ half the sample's calls from 2 min on,
// lag ≤ 10 % of the duration and ≤ 15 s, never more calls than the sample for short exports. The
// "none" rows are ours and have no goal: without progress there is nothing to estimate from, and
// seeing the end within 15 s takes a poll at least every 15 s (the backoff's ceiling).
// The sample polls at 10 s steps from its start and the simulator completes exactly on time, so
// with durations that are multiples of 10 s its lag is always 0: its best case, not its average.

import { AdminApiClient } from '../src/api/index.ts';
import { decide } from '../src/controllers/static-export-release/decide-release.ts';
import { exportPoll } from '../src/controllers/static-export-release/export/platform-export.ts';
import { afterStart } from '../src/controllers/static-export-release/export/start-export.ts';
import type { Status } from '../src/controllers/static-export-release/release-model.ts';
import { exportPollDelayMs } from '../src/controllers/static-export-release/schedule.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../src/crd/index.ts';
import { type ExportProgressModel, type Simulator, startSimulator } from '../src/simulator/index.ts';

const S = 1_000;
const MIN = 60 * S;
const DURATIONS = [20 * S, 2 * MIN, 10 * MIN, 30 * MIN];
const MODELS: ExportProgressModel[] = ['linear', 'stall', 'none'];
const SAMPLE_INTERVAL_MS = 10 * S;
const DOMAIN = 'docs.example.com';

interface Outcome {
  calls: number;
  lagMs: number;
}

let clock = Date.parse('2026-01-01T00:00:00Z');

function release(status: Status): StaticExportRelease {
  return {
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: { name: 'docs', namespace: 'docs', uid: 'bench', generation: 1 },
    spec: staticExportReleaseSpecSchema.parse({
      domain: DOMAIN,
      credentialsSecretRef: { name: 'key' },
      target: { valuesSecret: { name: 'values' } },
    }),
    status,
  };
}

function statusCalls(sim: Simulator, jobId: string): number {
  return sim.requests.filter((r) => r.endpoint === 'status' && r.path.endsWith(`/${jobId}`)).length;
}

/** The operator: start, then poll when decide says, until it decides to publish. */
async function operator(
  sim: Simulator,
  client: AdminApiClient,
  durationMs: number,
  prior: Status,
): Promise<Outcome & { status: Status }> {
  const now = () => new Date(clock);
  const started = await client.startExport({ domain: DOMAIN });
  const due = clock + durationMs;
  let status = afterStart(
    { now: now(), release: release(prior) },
    started.jobId,
    started.status ?? 'queued',
  ).status;
  let delay = exportPollDelayMs(status, now());
  while (delay !== undefined) {
    clock += delay;
    const poll = exportPoll(await client.getExport({ revision: 'contract', jobId: started.jobId }));
    const d = decide({ source: 'platform', now: now(), release: release(status), poll });
    status = d.status;
    if (d.action.kind === 'publish') break;
    delay = d.requeueAfterMs;
  }
  // What afterPublish leaves for the next export: the job finished.
  status = { ...status, export: { ...status.export, finishedAt: now().toISOString() } };
  return { calls: statusCalls(sim, started.jobId), lagMs: clock - due, status };
}

/** The platform's sample: every 10 s until a final state. */
async function sample(sim: Simulator, client: AdminApiClient, durationMs: number): Promise<Outcome> {
  const started = await client.startExport({ domain: DOMAIN });
  const due = clock + durationMs;
  for (;;) {
    clock += SAMPLE_INTERVAL_MS;
    const job = await client.getExport({ revision: 'contract', jobId: started.jobId });
    if (job.status === 'completed' || job.status === 'failed') break;
  }
  return { calls: statusCalls(sim, started.jobId), lagMs: clock - due };
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const label = (ms: number) => (ms < MIN ? `${ms / S} s` : `${ms / MIN} min`);

export async function run(): Promise<void> {
  const sim = await startSimulator({ clock: () => clock, exportDurationMs: 0 });
  const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
  const rows: string[] = [];
  const misses: string[] = [];
  const ungoaled: string[] = [];
  try {
    for (const model of MODELS) {
      sim.configure({ exportProgress: model });
      for (const durationMs of DURATIONS) {
        sim.configure({ exportDurationMs: durationMs });
        const base = await sample(sim, client, durationMs);
        const first = await operator(sim, client, durationMs, {});
        const repeat = await operator(sim, client, durationMs, first.status);
        rows.push(
          `| ${label(durationMs)} | ${model} | ${base.calls} | ${seconds(base.lagMs)} s | ${first.calls} | ${seconds(first.lagMs)} s | ${repeat.calls} | ${seconds(repeat.lagMs)} s |`,
        );
        if (model === 'none') {
          ungoaled.push(`${label(durationMs)} first ${first.calls} calls, lag ${seconds(first.lagMs)} s`);
          continue;
        }
        const lagGoal = Math.min(15 * S, durationMs / 10);
        for (const [name, o] of [
          ['first', first],
          ['repeat', repeat],
        ] as const) {
          const callGoal = durationMs >= 2 * MIN ? base.calls / 2 : base.calls;
          if (o.calls > callGoal)
            misses.push(`${label(durationMs)} ${model} ${name}: ${o.calls} calls > ${callGoal}`);
          if (o.lagMs > lagGoal)
            misses.push(
              `${label(durationMs)} ${model} ${name}: lag ${seconds(o.lagMs)} s > ${seconds(lagGoal)} s`,
            );
        }
      }
    }
  } finally {
    await client.close();
    await sim.close();
  }
  console.log(
    '| export | progress | sample: calls | sample: lag | ours, first: calls | lag | ours, repeat: calls | lag |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(misses.length ? `goals missed:\n  ${misses.join('\n  ')}` : 'all goals met');
  console.log(`none: no goal (no progress to estimate from): ${ungoaled.join('; ')}`);
  console.log(
    "The sample's lag is 0 because every duration is a multiple of its 10 s interval: its best case (5 s on average).",
  );
}
