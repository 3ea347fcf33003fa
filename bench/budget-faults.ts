// The start budget over a virtual day with faults (issue 38): two operators (two clusters) and a
// pipeline share one organization's 10 starts an hour. Cluster a runs 10 hourly sites with a share
// of 5 (--start-budget-per-hour), cluster b 2 hourly sites and 3 projects exported for a staging
// and a production release each (one export per project and base path) with a share of 3, and the
// pipeline starts 2 exports of its own at half past each hour. At 08:00 the organization's admin key
// is rotated (both clusters' Secrets: the next reconcile of each release uses the new key); from
// 13:50 the pipeline runs wild for 20 minutes (over its share, it takes every slot that frees, just
// before the clusters would); at 14:00, during the hold the clusters' 429s cause, cluster a's
// leader changes (a new process: fresh budgets, seeded from the releases'
// status as release-setup.ts does). All day, some starts create their job and then answer 502, 504 or drop
// the connection (as a gateway may), a few meet the per-minute limit's 429 (the client waits out its
// Retry-After: 1 s, of real time: the virtual clock stands still meanwhile), and cluster a's
// site-9 is broken (every export of its project ends failed); at 11:10 the platform purges the job
// cluster b's site-0 serves. Each release's reconcile runs as the operator's (decideOn, claim, the
// operator's own start effect and link step on a run the bench lends them, a failure's retry as the
// work queue's), through the production client against the simulator in revision 2 on a virtual clock. Reported: the
// hourly 429s the operators met, the most starts (jobs created) in any sliding hour of the
// organization, exports per release most over fewest, the slots lost or double-spent (every
// operator's count of the past hour compared with the start requests it sent in that hour, at
// every reconcile), the broken site's starts and the minutes a served link had expired while it was
// still the one written.

import { AdminApiClient } from '../src/api/index.ts';
import { secretRefText } from '../src/controllers/credentials.ts';
import { afterFailure, classifyError, type Failure } from '../src/controllers/failures.ts';
import { budgetGroup } from '../src/controllers/static-export-release/budget/recorded-starts.ts';
import { StartBudgets } from '../src/controllers/static-export-release/budget/start-budget.ts';
import { seedFrom } from '../src/controllers/static-export-release/budget/start-budget-seed.ts';
import { startExport } from '../src/controllers/static-export-release/export/start-export.ts';
import { memberKey, SharedExports } from '../src/controllers/static-export-release/share/shared-exports.ts';
import type { ReconcileResult } from '../src/controllers/types.ts';
import type { StaticExportRelease } from '../src/crd/index.ts';
import { type Simulator, startSimulator } from '../src/simulator/index.ts';
import { backoff } from '../src/timers.ts';
import { busiestHour, DAY, dayRelease, HOUR, MIN, reconcileRelease, START, WorkQueue } from './budget-day.ts';

const ROTATE_AT = START + 8 * HOUR;
const WILD_AT = START + 13 * HOUR + 50 * MIN;
const LEADER_CHANGE_AT = START + 14 * HOUR;
const PURGE_AT = START + 11 * HOUR + 10 * MIN;
const NEW_KEY = 'mint_rotated0123456789abcdef';

/** One cluster's operator: its client (the key its Secret holds now), budgets and share groups. */
interface Operator {
  name: string;
  share: number;
  client: AdminApiClient;
  budgets: StartBudgets;
  shared: SharedExports;
  /** When its start requests went out (any answer but a refusal of the request itself). */
  sent: number[];
  refused429: number;
  /** The most its count of the past hour fell short of (double) or exceeded (lost) what it sent. */
  doubleSpent: number;
  lost: number;
}

interface Site {
  op: Operator;
  release: StaticExportRelease;
  nextAt: number | undefined;
  exports: number;
  /** When its start requests went out. */
  starts: number[];
  /** Failed reconciles in a row: the work queue's per-key backoff. */
  failures: number;
  /** Time the link written had expired while it was still the one written, summed. */
  lapseMs: number;
  /** When it published new content, and when the served job's 404 was confirmed (ExportVanished). */
  published: number[];
  vanishedAt?: number;
}

/** What a reconcile asks of the work queue: a delay, nothing (wait for a change), or its backoff. */
type Next = number | undefined | 'backoff';

const release = (ns: string, name: string, projectId: string, basePath?: string) =>
  dayRelease(ns, name, { projectId, interval: '1h', ...(basePath === undefined ? {} : { basePath }) });

const project = (prefix: string, n: number) => `6520f3a1c9b1a20012${prefix}${String(n).padStart(4, '0')}`;

class FaultyDay {
  readonly sites: Site[];
  readonly ops: Operator[];
  private readonly sim: Simulator;
  private readonly queue: WorkQueue<Site>;
  private key: string;

  constructor(sim: Simulator) {
    this.sim = sim;
    this.queue = new WorkQueue(sim);
    this.sites = this.queue.sites;
    this.key = sim.adminKey;
    this.ops = [this.operator('a', 5), this.operator('b', 3)];
    const [a, b] = this.ops as [Operator, Operator];
    for (let i = 0; i < 10; i++) this.site(a, release('a', `site-${i}`, project('aa', i)));
    // Its every export ends failed (`start@<project>:fail:1`): it must back off, not eat the hour.
    for (let i = 0; i < 2; i++) this.site(b, release('b', `site-${i}`, project('bb', i)));
    for (let i = 0; i < 3; i++)
      for (const stage of ['staging', 'production'])
        this.site(b, release('b', `${stage}-${i}`, project('bc', i), '/docs'));
  }

  private operator(name: string, share: number): Operator {
    const now = () => this.sim.now();
    const { wake } = this.queue;
    return {
      name,
      share,
      client: new AdminApiClient({ baseUrl: this.sim.baseUrl, apiKey: this.key }),
      budgets: new StartBudgets({ limit: share, now, wake }),
      shared: new SharedExports({ now, wake }),
      sent: [],
      refused429: 0,
      doubleSpent: 0,
      lost: 0,
    };
  }

  private site(op: Operator, r: StaticExportRelease): void {
    this.sites.push({
      op,
      release: r,
      nextAt: START,
      exports: 0,
      starts: [],
      failures: 0,
      lapseMs: 0,
      published: [],
    });
  }

  async run(): Promise<void> {
    const events: { at: number; run: () => Promise<void> }[] = [
      { at: ROTATE_AT, run: () => this.rotate() },
      // Over its share: it takes every slot that frees for 20 minutes, before the clusters see it.
      {
        at: WILD_AT,
        run: async () => {
          for (const q of this.sim.requests)
            if (
              q.endpoint === 'start' &&
              q.status === 202 &&
              q.time + HOUR >= WILD_AT &&
              q.time + HOUR < WILD_AT + 20 * MIN
            )
              events.push({ at: q.time + HOUR, run: () => this.pipeline(1) });
          events.sort((x, y) => x.at - y.at);
        },
      },
      { at: LEADER_CHANGE_AT, run: () => this.leaderChange(this.ops[0] as Operator) },
      { at: PURGE_AT, run: async () => this.purge(this.purged) },
    ];
    for (let h = 0; h < 24; h++)
      events.push({ at: START + h * HOUR + 30 * MIN, run: () => this.pipeline(2) });
    events.sort((x, y) => x.at - y.at);
    for (;;) {
      const next = this.queue.next();
      const due = events[0];
      if (due && (next === undefined || due.at <= next.nextAt)) {
        this.queue.advanceTo(due.at);
        events.shift();
        await due.run();
        continue;
      }
      if (next === undefined || next.nextAt >= START + DAY) return;
      await this.queue.turn(next, (s) => this.queued(s));
      this.audit(next.op, next.release);
    }
  }

  /** The reconcile and the work queue's answer to it: a failure is retried with its per-key backoff. */
  private async queued(s: Site): Promise<number | undefined> {
    let next: Next;
    try {
      next = await this.reconcile(s);
    } catch (e) {
      next = this.failed(classifyError(e, secretRefText(s.release)));
    }
    if (next !== 'backoff') {
      s.failures = 0;
      return next;
    }
    return backoff(s.failures++, { base: 1_000, max: 5 * MIN });
  }

  /** As the skeleton's fail: the failure's own delay, the work queue's backoff, or a wait for a change. */
  private failed(f: Failure): Next {
    return this.next(afterFailure(f));
  }

  /** The site whose served job the platform purges. */
  get purged(): Site {
    return this.sites.find((x) => memberKey(x.release) === 'b/site-0') as Site;
  }

  /** The platform forgets the job the site serves: its link's renewal meets 404. */
  private purge(s: Site): void {
    const jobId = s.release.status?.current?.jobId;
    if (jobId === undefined || !this.sim.purgeExportJob(jobId))
      throw new Error(
        `bench: ${memberKey(s.release)} serves no job to purge at ${new Date(this.sim.now()).toISOString()}`,
      );
  }

  /** Stores a status, noting how long the link written had expired when it is replaced. */
  private commit(s: Site, status: StaticExportRelease['status']): void {
    const was = s.release.status?.current?.expiresAt;
    const is = status?.current?.expiresAt;
    if (was !== undefined && is !== was) s.lapseMs += Math.max(0, this.sim.now() - Date.parse(was));
    s.release = { ...s.release, status };
  }

  /** The pipeline's exports of its own projects: `n` starts now, with the organization's key. */
  private async pipeline(n: number): Promise<void> {
    const client = new AdminApiClient({ baseUrl: this.sim.baseUrl, apiKey: this.key });
    for (let i = 0; i < n; i++)
      await client
        .startExport({ projectId: project('cc', Math.floor(this.sim.now() / MIN) * 10 + i) })
        .catch(() => {});
    await client.close();
  }

  /** The admin key rotated: the simulator takes the new one, each cluster's next reconcile uses it. */
  private async rotate(): Promise<void> {
    this.key = NEW_KEY;
    this.sim.configure({ adminKey: NEW_KEY });
    for (const op of this.ops) {
      await op.client.close();
      op.client = new AdminApiClient({ baseUrl: this.sim.baseUrl, apiKey: NEW_KEY });
    }
  }

  /** A new leader: fresh budgets and share groups, seeded from its releases' status. */
  private async leaderChange(op: Operator): Promise<void> {
    const now = () => this.sim.now();
    const { wake } = this.queue;
    op.budgets = new StartBudgets({ limit: op.share, now, wake });
    op.shared = new SharedExports({ now, wake });
    const group = budgetGroup(undefined, op.client.keyId).name;
    for (const s of this.sites) if (s.op === op) seedFrom(op.budgets, group, s.release);
  }

  /** The operator's count of the past hour against the start requests it sent in that hour. */
  private audit(op: Operator, r: StaticExportRelease): void {
    const group = budgetGroup(undefined, op.client.keyId).name;
    const counted = op.budgets.view(group, memberKey(r)).used;
    const sent = op.sent.filter((t) => t > this.sim.now() - HOUR).length;
    op.doubleSpent = Math.max(op.doubleSpent, sent - counted);
    op.lost = Math.max(op.lost, counted - sent);
  }

  /**
   * The operator's reconcile: the site's status is what its effects act on and what they commit, a
   * failure is recorded as the skeleton would.
   */
  private reconcile(s: Site): Promise<Next> {
    const { op } = s;
    const now = new Date(this.sim.now());
    return reconcileRelease(
      op,
      s,
      now,
      {
        sent: () => {
          op.sent.push(this.sim.now());
          s.starts.push(this.sim.now());
        },
        commit: async ({ status, events }) => {
          if (events.some((e) => e.reason === 'RateLimited')) op.refused429++;
          if (events.some((e) => e.reason === 'ExportVanished')) s.vanishedAt ??= now.getTime();
          this.commit(s, status);
        },
        fail: async (status, f) => {
          this.commit(s, status);
          return afterFailure(f);
        },
      },
      async (claimed) => {
        const { look, decision: d, run } = claimed;
        // The operator's own start effect (export/start-export.ts).
        if (d.action.kind === 'start') return this.next(await startExport({ now: () => now }, look, run));
        if (d.action.kind === 'publish') {
          const { published, result } = await claimed.publish(d.action);
          if (published && d.action.mode === 'NewContent') {
            s.exports++;
            s.published.push(now.getTime());
          }
          return this.next(result);
        }
        if (d.failure) return this.failed(d.failure);
        return d.requeueAfterMs;
      },
    );
  }

  private next(result: ReconcileResult): Next {
    return result.backoff ? 'backoff' : result.requeueAfterMs;
  }
}

/** A seeded source for the simulator's fault draws (mulberry32): every run meets the same faults. */
function seeded(seed: number): () => number {
  let t = seed;
  return () => {
    t = (t + 0x6d2b79f5) | 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

const BROKEN = project('aa', 9);
const FAULTS = [
  `start@${BROKEN}:fail:1`,
  // Few: the client waits each out for its Retry-After (1 s) of real time.
  'start:429:0.02:3',
  'start:created=502:0.02',
  'start:created=504:0.02',
  'start:created=reset:0.02',
];

const minutes = (ms: number) => Math.round(ms / MIN);

export async function runFaultyDay(): Promise<void> {
  const sim = await startSimulator({
    apiRevision: 2,
    clock: () => START,
    exportDurationMs: 4 * MIN,
    faults: FAULTS,
    random: seeded(38),
  });
  const day = new FaultyDay(sim);
  try {
    await day.run();
  } finally {
    for (const op of day.ops) await op.client.close();
    await sim.close();
  }
  const starts = sim.requests.filter((q) => q.endpoint === 'start');
  const faulted = (q: (typeof starts)[number], kind: string) =>
    q.faults?.some((f) => f.split(':')[1] === kind) === true;
  const createdThen5xx = starts.filter((q) => q.faults?.some((f) => f.includes(':created=')));
  const created = starts.filter((q) => q.status === 202 || createdThen5xx.includes(q)).map((q) => q.time);
  const perMinute429 = starts.filter((q) => faulted(q, '429')).length;
  const broken = day.sites.find((s) => s.release.spec.projectId === BROKEN) as Site;
  const purged = day.purged;
  // A link written that had expired by the day's end counts to the end.
  for (const s of day.sites) {
    const expires = s.release.status?.current?.expiresAt;
    if (expires !== undefined) s.lapseMs += Math.max(0, START + DAY - Date.parse(expires));
  }
  const exports = day.sites.filter((s) => s !== broken).map((s) => s.exports);
  const most = Math.max(...exports);
  const fewest = Math.min(...exports);
  console.log(
    `\nA day with faults: cluster a (10 hourly sites, share 5), cluster b (2 hourly sites and 3 projects exported for staging and production, share 3) and a pipeline (2 starts at half past each hour) on one organization; the key rotated at 08:00, the pipeline over its share from 13:50 to 14:10, cluster a's leader changed at 14:00; cluster a's site-9 broken (every export fails), cluster b's site-0's served job purged at 11:10; start faults ${FAULTS.slice(1).join(', ')} (counts on the virtual clock)`,
  );
  console.log('| figure | cluster a | cluster b | goal |');
  console.log('|---|---|---|---|');
  const [a, b] = day.ops as [Operator, Operator];
  console.log(`| hourly 429s met | ${a.refused429} | ${b.refused429} | 0 but the pipeline's excess |`);
  console.log(`| start requests sent | ${a.sent.length} | ${b.sent.length} | |`);
  console.log(
    `| most double-spent (sent in the past hour, not counted) | ${a.doubleSpent} | ${b.doubleSpent} | 0 |`,
  );
  console.log(`| most lost (counted in the past hour, not sent) | ${a.lost} | ${b.lost} | 0 |`);
  const lapse = (op: Operator) =>
    minutes(day.sites.filter((s) => s.op === op).reduce((sum, s) => sum + s.lapseMs, 0));
  console.log(`| minutes a served link had expired (summed over releases) | ${lapse(a)} | ${lapse(b)} | 0 |`);
  console.log(
    `starts answered after the job was created (502, 504, reset): ${createdThen5xx.length}; per-minute 429s: ${perMinute429} (each retried by the client after its Retry-After)`,
  );
  console.log(
    `broken site (a/site-9): ${broken.starts.length} start requests in the day, most in any sliding hour ${busiestHour(broken.starts)} (goal: backs off, far below 12), status.exportFailures ${broken.release.status?.exportFailures ?? 0} at the end`,
  );
  const replaced = purged.published.find((t) => t >= (purged.vanishedAt ?? Number.POSITIVE_INFINITY));
  const replacementStart = purged.starts.find((t) => t >= (purged.vanishedAt ?? Number.POSITIVE_INFINITY));
  // Starts of its cluster's other releases between the confirmation and the replacement's start.
  const ahead = day.sites
    .filter((s) => s.op === purged.op && s !== purged)
    .flatMap((s) => s.starts)
    .filter((t) => t >= (purged.vanishedAt ?? 0) && t < (replacementStart ?? 0)).length;
  console.log(
    purged.vanishedAt === undefined
      ? 'purged job: its 404 was never confirmed (the release moved on before renewing it)'
      : `purged job (b/site-0): gone confirmed at +${minutes(purged.vanishedAt - PURGE_AT)} min after the purge, replacement started +${replacementStart === undefined ? '-' : minutes(replacementStart - purged.vanishedAt)} min later (the group's next free slot; starts of the cluster's other releases before it: ${ahead}) and published +${replaced === undefined ? '-' : minutes(replaced - purged.vanishedAt)} min after that; its served link expired for ${minutes(purged.lapseMs)} min (goal 0)`,
  );
  console.log(
    `organization: ${created.length} jobs created, most in any sliding hour ${busiestHour(created)} (goal at most 10); start requests ${starts.length}, 409s ${starts.filter((q) => q.status === 409).length}, 429s ${starts.filter((q) => q.status === 429).length}`,
  );
  console.log(
    `exports per release (the broken one aside), most over fewest: ${most}/${fewest} = ${fewest === 0 ? 'inf' : (most / fewest).toFixed(2)} (goal at most 1.5)`,
  );
}
