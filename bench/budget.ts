// The start budget (issue 31) over a virtual day: 20 sites, each its own project, on one admin key
// of the platform's current export API (10 starts per organization per hour), with intervals that
// together want more starts than that. Each release's reconcile loop runs as the operator's: observe
// (the recorded job polled through its share visit), decide with the budget's view and claim
// (release-reconciler.ts `decideOn` and `claim`), then the operator's own start effect
// (start-export.ts) on a run the bench lends it, or the publish folded back into status as
// publish-content.ts does, the next look at the decision's
// requeue (or the action's), a budget or share-group wake looking at once. Every call goes through
// the production client to the simulator in revision 2, whose clock the loop advances to each next
// look, so the day takes a moment. No target and no download: a version is derived from the job id.
// Nothing is asserted; the goals: no 429, at most 10 starts in any sliding hour, no site starved,
// exports per site most over fewest at most 1.5.

import { AdminApiClient } from '../src/api/index.ts';
import { StartBudgets } from '../src/controllers/static-export-release/budget/start-budget.ts';
import { startExport } from '../src/controllers/static-export-release/export/start-export.ts';
import type { Folded } from '../src/controllers/static-export-release/release-model.ts';
import { SharedExports } from '../src/controllers/static-export-release/share/shared-exports.ts';
import { parseDuration, type StaticExportRelease } from '../src/crd/index.ts';
import { EXPORT_STARTS_PER_HOUR } from '../src/project.ts';
import { type Simulator, startSimulator } from '../src/simulator/index.ts';
import { busiestHour, DAY, dayRelease, HOUR, MIN, reconcileRelease, START, WorkQueue } from './budget-day.ts';
import { runFaultyDay } from './budget-faults.ts';

const EXPORT_MS = 4 * MIN;
/** 4 sites every 30 minutes, 8 hourly, 8 every 2 hours: 20 starts an hour wanted. */
const INTERVALS = [...Array(4).fill('30m'), ...Array(8).fill('1h'), ...Array(8).fill('2h')] as string[];

interface Site {
  release: StaticExportRelease;
  intervalMs: number;
  /** When the loop looks at it next (undefined: only when woken). */
  nextAt: number | undefined;
  starts: number[];
  /** The longest time its served link had expired before a fresh one replaced it. */
  lapseMs: number;
}

/** The operator's loop over the sites (its work queue), with its budgets and share groups. */
class Day {
  readonly sites: Site[];
  readonly budgets: StartBudgets;
  readonly shared: SharedExports;
  readonly events = new Map<string, number>();
  /** GETs made for a renewal's link (the others poll a job in flight). */
  renewalGets = 0;

  private readonly sim: Simulator;
  private readonly client: AdminApiClient;
  private readonly queue: WorkQueue<Site>;

  constructor(sim: Simulator, client: AdminApiClient) {
    this.sim = sim;
    this.client = client;
    this.queue = new WorkQueue(sim);
    const now = () => sim.now();
    const { wake } = this.queue;
    this.budgets = new StartBudgets({ now, wake });
    this.shared = new SharedExports({ now, wake });
    this.sites = this.queue.sites;
    this.sites.push(...INTERVALS.map((interval, i) => site(i, interval)));
  }

  async run(until: number): Promise<void> {
    for (;;) {
      const next = this.queue.next();
      if (next === undefined || next.nextAt >= until) return;
      await this.queue.turn(next, (s) => this.reconcile(s));
    }
  }

  /**
   * observe -> decide and claim -> act, as the operator's reconcile; the next look's delay. The
   * site's status is what the operator's effects act on and commit; no start or publish fails here,
   * so a failure is thrown.
   */
  private reconcile(s: Site): Promise<number | undefined> {
    const { client, budgets, shared } = this;
    const now = new Date(this.sim.now());
    return reconcileRelease(
      { client, budgets, shared },
      s,
      now,
      {
        commit: async (step) => {
          if (step.events.some((e) => e.reason === 'ExportStarted')) s.starts.push(now.getTime());
          this.commit(s, { status: step.status, events: [...step.events] });
        },
        fail: async (_, __, cause) => {
          throw cause;
        },
      },
      async (claimed) => {
        const { look, decision, run } = claimed;
        this.count(decision.events);
        const { action } = decision;
        if (action.kind === 'none') return decision.requeueAfterMs;
        // The operator's own start effect (export/start-export.ts).
        if (action.kind === 'start') return (await startExport({ now: () => now }, look, run)).requeueAfterMs;
        if (action.kind !== 'publish') throw new Error(`unexpected action ${action.kind}`);
        const asked = this.sim.requests.length;
        const { result } = await claimed.publish(action);
        if (action.mode !== 'NewContent')
          this.renewalGets += this.sim.requests.slice(asked).filter((r) => r.method === 'GET').length;
        return result.requeueAfterMs;
      },
    );
  }

  private commit(s: Site, folded: Folded): void {
    const was = s.release.status?.current?.expiresAt;
    const is = folded.status.current?.expiresAt;
    if (was !== undefined && is !== was) s.lapseMs = Math.max(s.lapseMs, this.sim.now() - Date.parse(was));
    s.release = { ...s.release, status: folded.status };
    this.count(folded.events);
  }

  private count(events: readonly { reason: string }[]): void {
    for (const e of events) this.events.set(e.reason, (this.events.get(e.reason) ?? 0) + 1);
  }
}

function site(i: number, interval: string): Site {
  const n = String(i).padStart(2, '0');
  const release = dayRelease('docs', `site-${n}`, { projectId: `proj-${n}`, interval });
  const intervalMs = parseDuration(interval);
  if (intervalMs === undefined) throw new Error(`not a duration: ${interval}`);
  return { release, intervalMs, nextAt: START, starts: [], lapseMs: 0 };
}

/** The longest time without a start: between two, or from the last to the end of the day. */
function longestGap(starts: number[], end: number): number {
  let gap = 0;
  for (let i = 1; i < starts.length; i++) gap = Math.max(gap, (starts[i] ?? 0) - (starts[i - 1] ?? 0));
  return Math.max(gap, end - (starts.at(-1) ?? START));
}

const minutes = (ms: number) => `${Math.round(ms / MIN)}m`;

export async function run(): Promise<void> {
  const sim = await startSimulator({ apiRevision: 2, clock: () => START, exportDurationMs: EXPORT_MS });
  const client = new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey });
  const day = new Day(sim, client);
  const demand = day.sites.reduce((sum, s) => sum + HOUR / s.intervalMs, 0);
  try {
    await day.run(START + DAY);
  } finally {
    await client.close();
    await sim.close();
  }
  const starts = sim.requests.filter((r) => r.endpoint === 'start');
  const refused = starts.filter((r) => r.status === 429).length;
  const busy = starts.filter((r) => r.status === 409).length;
  const started = starts.filter((r) => r.status === 202).map((r) => r.time);
  const gets = sim.requests.filter((r) => r.method === 'GET' && r.endpoint === 'status').length;
  const end = START + DAY;
  const busiest = busiestHour(started);
  const counts = day.sites.map((s) => s.starts.length);
  const most = Math.max(...counts);
  const fewest = Math.min(...counts);
  const spread = fewest === 0 ? Number.POSITIVE_INFINITY : most / fewest;

  console.log(
    `${day.sites.length} sites on one key, intervals ${summary(INTERVALS)}: demand ${demand.toFixed(1)} starts/hour against ${EXPORT_STARTS_PER_HOUR}; exports take ${minutes(EXPORT_MS)}; 24 virtual hours`,
  );
  console.log('| site | interval | exports | longest gap between starts | gap / interval |');
  console.log('|---|---|---|---|---|');
  const starved: string[] = [];
  for (const s of day.sites) {
    const gap = longestGap(s.starts, end);
    const ratio = gap / s.intervalMs;
    console.log(
      `| ${s.release.metadata.name} | ${s.release.spec.interval} | ${s.starts.length} | ${minutes(gap)} | ${ratio.toFixed(1)}x |`,
    );
    if (s.starts.length === 0) starved.push(s.release.metadata.name ?? '');
  }
  const byInterval = [...new Set(INTERVALS)].map((interval) => {
    const of = day.sites.filter((s) => s.release.spec.interval === interval);
    const n = of.map((s) => s.starts.length);
    const gaps = of.map((s) => longestGap(s.starts, end));
    return `${interval}: ${Math.min(...n)}-${Math.max(...n)} exports, longest gap ${minutes(Math.max(...gaps))}`;
  });
  console.log(`by interval: ${byInterval.join('; ')}`);
  console.log(`starts: ${started.length} (${(started.length / 24).toFixed(2)} per hour); 409s: ${busy}`);
  const lapse = Math.max(...day.sites.map((x) => x.lapseMs));
  const polls = gets - day.renewalGets;
  console.log(
    `GETs: ${gets}: ${polls} polls of jobs in flight (${(polls / Math.max(1, started.length)).toFixed(2)} per export, the completing one carrying the link to publish), ${day.renewalGets} link renewals (links live 15 min)`,
  );
  console.log(`operator events: ${[...day.events].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const goals = [
    [`429s: ${refused}`, refused === 0],
    [
      `most starts in any sliding hour: ${busiest} (goal at most ${EXPORT_STARTS_PER_HOUR})`,
      busiest <= EXPORT_STARTS_PER_HOUR,
    ],
    [`longest time a served link had expired (waiting for a slot): ${minutes(lapse)} (goal 0)`, lapse === 0],
    [`sites never started: ${starved.length ? starved.join(', ') : 'none'}`, starved.length === 0],
    [
      `exports per site, most over fewest: ${most}/${fewest} = ${spread.toFixed(2)} (goal at most 1.5)`,
      spread <= 1.5,
    ],
  ] as const;
  for (const [text, met] of goals) console.log(`${text}: ${met ? 'met' : 'MISSED'}`);
  await runFaultyDay();
}

function summary(intervals: string[]): string {
  const n = new Map<string, number>();
  for (const i of intervals) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].map(([i, k]) => `${k} x ${i}`).join(', ');
}
