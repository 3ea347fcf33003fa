// Which sites of a `mirror sync` run start an export of the current API revision, within the starts
// the hour leaves (start-record.ts): the first ones in mirror.yaml's order; the others wait, each
// told when a start is possible again. A 429 (the organization's starts used up by others too)
// stops every start after it. Sites of the contract's revision have no such limit and start as before.
import { type ExportBusyError, ExportStartLimitError } from '../api/errors.ts';
import type { StartedExport } from '../api/schemas.ts';
import type { SyncSite, SyncTarget } from '../oci/sync.ts';
import { startWhenFree } from './export-start.ts';
import { HOUR_MS, STARTS_PER_HOUR, type StartRecord } from './start-record.ts';

export type WaitReason = 'startBudget' | 'rateLimited';

/** A site that was not started: the hour's starts are used up. */
export class StartWaiting extends Error {
  override readonly name = 'StartWaiting';
  readonly notBefore: Date;
  readonly reason: WaitReason;
  constructor(notBefore: Date, reason: WaitReason, message: string) {
    super(message);
    this.notBefore = notBefore;
    this.reason = reason;
  }
}

const iso = (at: number | Date) => new Date(at).toISOString().replace(/\.\d+Z$/, 'Z');

interface BusyOptions {
  /** How long a site may wait for another export of its project (409) to end. */
  timeoutMs: number;
  onBusy: (target: SyncTarget, delayMs: number, error: ExportBusyError) => void;
}

export class StartPlan {
  /** The platform's starts per organization and hour. */
  readonly perHour = STARTS_PER_HOUR;
  /** This key's starts the record holds for the last hour, when the run began. */
  readonly used: number;
  /** Sites of the current revision that start this run, in mirror.yaml's order. */
  readonly starting: SyncTarget[];
  /** Those that wait, with when each could start (the k-th when the k-th oldest start leaves the hour). */
  readonly waiting: ReadonlyMap<SyncTarget, Date>;
  private readonly record: StartRecord;
  private blockedUntil: Date | undefined;

  constructor(targets: SyncTarget[], record: StartRecord, now: number) {
    this.record = record;
    const recent = record.recent(now);
    this.used = recent.length;
    const projects = targets.filter((t) => !('domain' in t.site));
    const left = record.left(now);
    this.starting = projects.slice(0, left);
    // The hour after this run's starts: the last STARTS_PER_HOUR of them, oldest first.
    const window = [...recent, ...this.starting.map(() => now)].slice(-STARTS_PER_HOUR);
    this.waiting = new Map(
      projects.slice(left).map((target, k) => {
        const hours = Math.floor(k / STARTS_PER_HOUR) + 1;
        return [target, new Date((window[k % STARTS_PER_HOUR] ?? now) + hours * HOUR_MS)];
      }),
    );
  }

  /**
   * Starts `target` through `startExport` if the plan and the platform let it, waiting out a busy
   * project (409) like `export`, and records the start; else throws StartWaiting.
   */
  async start(
    target: SyncTarget,
    startExport: (site: SyncSite) => Promise<StartedExport>,
    busy: BusyOptions,
  ): Promise<StartedExport> {
    if ('domain' in target.site) return startExport(target.site);
    const slot = this.waiting.get(target);
    if (slot !== undefined) {
      throw new StartWaiting(
        slot,
        'startBudget',
        `waits: this tool made ${this.used} of the ${STARTS_PER_HOUR} export starts an hour allows in the last hour ` +
          `(${this.record.file}) and the sites before it take the rest; the next start for it is possible at ${iso(slot)}`,
      );
    }
    if (this.blockedUntil !== undefined) throw this.refused(this.blockedUntil);
    try {
      const started = await startWhenFree(() => startExport(target.site), {
        timeoutMs: busy.timeoutMs,
        what: target.name,
        onBusy: (delayMs, error) => busy.onBusy(target, delayMs, error),
      });
      await this.record.add(Date.now(), target.name);
      return started;
    } catch (error) {
      if (!(error instanceof ExportStartLimitError)) throw error;
      // Without a Retry-After: when the oldest start this tool knows of leaves the hour, else an hour.
      const now = Date.now();
      this.blockedUntil ??= new Date(
        error.retryAfterMs === undefined
          ? (this.record.recent(now)[0] ?? now) + HOUR_MS
          : now + error.retryAfterMs,
      );
      throw this.refused(this.blockedUntil);
    }
  }

  private refused(until: Date): StartWaiting {
    return new StartWaiting(
      until,
      'rateLimited',
      `waits: the platform refused an export start (429): the organization's ${STARTS_PER_HOUR} starts an hour are ` +
        `used up, by this tool or others of the organization (the operator, the dashboard, other keys); no more starts this run; ` +
        `the next is possible at ${iso(until)}`,
    );
  }
}
