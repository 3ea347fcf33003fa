// Workload rolls per site per day with each spec.rollout.onLinkRenewal (None, Rollout): the release
// controller's own decisions (decide-release.ts and the after-* folds, status carried from one reconcile to
// the next as the reconciler writes it) against the simulator through the production client, on a
// virtual clock that the loop advances to each requeue, so a week takes a moment (figures are per
// day, over 7 days). Links live 15 minutes (the simulator's default) or 24 hours; renewal is the
// default, a third of the lifetime before expiry. The release looks for new content every hour (spec.interval 1h); the docs either never
// change or change every 6 hours (4 of the 24 exports carry new content). One Deployment serves the
// site and completes each rollout at once. A roll is a decision to roll the workloads, by reason.

import { AdminApiClient } from '../src/api/index.ts';
import { decide } from '../src/controllers/static-export-release/decide-release.ts';
import { exportPoll } from '../src/controllers/static-export-release/export/platform-export.ts';
import { afterPublish } from '../src/controllers/static-export-release/export/publish-content.ts';
import { afterStart } from '../src/controllers/static-export-release/export/start-export.ts';
import type { Status } from '../src/controllers/static-export-release/release-model.ts';
import { afterRoll } from '../src/controllers/static-export-release/rollout/rollout.ts';
import { inFlight } from '../src/controllers/static-export-release/schedule.ts';
import { type StaticExportRelease, staticExportReleaseSpecSchema } from '../src/crd/index.ts';
import { startSimulator } from '../src/simulator/index.ts';
import type { Workload } from '../src/targets/workloads.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAYS = 7;
const DAY = 24 * HOUR;
const LINK_TTLS_S = [15 * 60, 24 * 3600];
/** How often the docs change: never, or every 6 hours. */
const CONTENT = [
  { name: 'unchanged content', everyMs: Number.POSITIVE_INFINITY },
  { name: 'new content every 6 h', everyMs: 6 * HOUR },
];
/** After a write the operator reconciles again at once (its own status change is an event). */
const AFTER_WRITE_MS = 1_000;
const SETTINGS = ['None', 'Rollout'] as const;

let clock = Date.parse('2026-01-01T00:00:00Z');

interface Day {
  rolls: Record<string, number>;
  exports: number;
  renewals: number;
}

async function simulateDays(
  onLinkRenewal: (typeof SETTINGS)[number],
  contentEveryMs: number,
  linkTtlSeconds: number,
): Promise<Day> {
  const sim = await startSimulator({ clock: () => clock, exportDurationMs: 2 * MIN, linkTtlSeconds });
  const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
  const start = clock;
  const spec = staticExportReleaseSpecSchema.parse({
    domain: 'docs.example.com',
    credentialsSecretRef: { name: 'key' },
    target: { valuesSecret: { name: 'values' } },
    interval: '1h',
    rollout: { onLinkRenewal },
  });
  const meta = { name: 'docs', namespace: 'docs', uid: 'bench', generation: 1 };
  let status: Status = {};
  const release = (): StaticExportRelease => ({
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: meta,
    spec,
    status,
  });
  const site: Workload = {
    kind: 'Deployment',
    name: 'docs',
    generation: 1,
    annotations: {},
    progress: { state: 'done' },
  };
  const day: Day = { rolls: {}, exports: 0, renewals: 0 };
  try {
    while (clock < start + DAYS * DAY) {
      const now = new Date(clock);
      const jobId =
        inFlight(status) && status.export?.state !== 'completed' ? status.export?.jobId : undefined;
      const poll = jobId ? exportPoll(await client.getExport({ revision: 'contract', jobId })) : undefined;
      const d = decide({
        source: 'platform',
        now,
        release: release(),
        client,
        ...(poll ? { poll } : {}),
        ...(jobId ? {} : { workloads: [site] }),
      });
      if (d.failure) throw new Error(`unexpected failure: ${d.failure.message}`);
      status = d.status;
      const a = d.action;
      if (a.kind === 'start') {
        const started = await client.startExport({ domain: spec.domain ?? '' });
        status = afterStart({ now, release: release() }, started.jobId, started.status ?? 'queued').status;
        day.exports++;
      } else if (a.kind === 'publish') {
        const bundle = await client.generateBundle(a.jobId);
        const version = `sha256-${Math.floor((clock - start) / contentEveryMs)
          .toString(16)
          .padStart(64, '0')}`;
        status = afterPublish(
          { now, release: release() },
          {
            mode: a.mode,
            jobId: a.jobId,
            version: a.mode === 'NewContent' ? version : (status.current?.version ?? version),
            expiresAt: new Date(bundle.expiresAt),
            wrote: true,
          },
        ).status;
        if (a.mode === 'Renew') day.renewals++;
      } else if (a.kind === 'roll') {
        day.rolls[a.reason] = (day.rolls[a.reason] ?? 0) + 1;
        site.generation++;
        site.annotations = { ...a.annotations };
        status = { ...status, current: afterRoll(release(), a, [{ ...site }], now).current };
      }
      const waitMs = a.kind === 'none' ? d.requeueAfterMs : AFTER_WRITE_MS;
      if (waitMs === undefined) throw new Error('the release waits for a change that never comes');
      clock += Math.max(waitMs, AFTER_WRITE_MS);
    }
  } finally {
    await client.close();
    await sim.close();
  }
  return day;
}

const perDay = (n: number) => (n / DAYS).toFixed(1).replace(/\.0$/, '');

export async function run(): Promise<void> {
  const rows: string[] = [];
  for (const ttl of LINK_TTLS_S)
    for (const content of CONTENT)
      for (const setting of SETTINGS) {
        const days = await simulateDays(setting, content.everyMs, ttl);
        const total = Object.values(days.rolls).reduce((a, b) => a + b, 0);
        const reasons = Object.entries(days.rolls)
          .map(([reason, n]) => `${reason} ${perDay(n)}`)
          .join(', ');
        rows.push(
          `| ${ttl < 3600 ? `${ttl / 60} min` : `${ttl / 3600} h`} | ${content.name} | ${setting} | ${perDay(total)} | ${reasons} | ${perDay(days.renewals)} | ${perDay(days.exports)} |`,
        );
      }
  console.log(
    [
      `Workload rolls per site per day (over ${DAYS} days; the first publish counts as a NewVersion roll), an export every hour:`,
      '| link lifetime | docs | onLinkRenewal | rolls | by reason | link renewals | exports |',
      '|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}
