// Which sites of a `mirror sync` run start an export of the current API revision, within the share
// of the hour the group's recorded starts leave (start-record.ts): the first ones in mirror.yaml's
// order; the others wait, each told when a start is possible again. Every start request, a 409
// probe included, takes a slot of the record before it goes out, one request at a time, so a 429
// stops every start after it and overlapping runs never exceed the share together. Sites of the
// contract's revision have no such limit and start as before.

import {
  AdminApiError,
  ExportBusyError,
  ExportStartLimitError,
  NetworkError,
  RateLimitedError,
  startMayHaveCreatedJob,
  TimeoutError,
} from '../api/errors.ts';
import { oneJobAtATimeOf, revisionOfTarget } from '../api/index.ts';
import type { StartedExport } from '../api/schemas.ts';
import { HOUR_MS } from '../api/sliding-window.ts';
import type { SyncSite, SyncTarget } from '../oci/sync.ts';
import { EXPORT_STARTS_PER_HOUR } from '../project.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { startMayHaveCreated, startWhenFree } from './export-start.ts';
import type { StartOutcome, StartRecord } from './start-record.ts';

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

/** What a failed start leaves in the record: `none` only when nothing can have reached the platform. */
export function outcomeOf(error: unknown): Exclude<StartOutcome, 'sent' | 'started'> | 'none' {
  if (error instanceof ExportBusyError) return 'busy';
  if (error instanceof RateLimitedError) return error.clientSide ? 'none' : 'refused';
  if (startMayHaveCreatedJob(error)) return 'unknown';
  if ((error instanceof NetworkError || error instanceof TimeoutError) && error.beforeRequestSent)
    return 'none';
  // 400, 401, 403, 404: refused for what the request is; nothing started. (A 202 the client could
  // not read started a job: unknown, like anything else.)
  const status = error instanceof AdminApiError ? error.status : undefined;
  if (status !== undefined && status >= 400 && status < 500) return 'none';
  return 'unknown';
}

/** A site whose revision limits starts (the current one): the plan counts its starts. */
const countsStarts = (target: SyncTarget): boolean => revisionOfTarget(target.site).startLimit !== undefined;

export class StartPlan {
  /** The start budget group the record counts for. */
  readonly group: string;
  /** The group's share of the organization's starts an hour. */
  readonly perHour: number;
  /** The group's starts the record holds for the last hour, when the run began. */
  readonly used: number;
  /** Sites of the current revision that start this run, in mirror.yaml's order. */
  readonly starting: SyncTarget[];
  /** Those that wait, with when each could start (the k-th when the k-th oldest start leaves the hour). */
  readonly waiting: ReadonlyMap<SyncTarget, Date>;
  private readonly record: StartRecord;
  private blockedUntil: number | undefined;
  /** Projects whose start this run may have created a job: not started again. */
  private readonly mayExist = new Set<string>();
  /** One start request at a time: a 429 is known before the next one would go out. */
  private sending: Promise<unknown> = Promise.resolve();

  constructor(targets: SyncTarget[], record: StartRecord, now: number) {
    this.record = record;
    this.group = record.group;
    this.perHour = record.perHour;
    const recent = record.recent(now);
    this.used = recent.length;
    this.blockedUntil = record.blockedUntil(now);
    const projects = targets.filter(countsStarts);
    const left = this.blockedUntil === undefined ? record.left(now) : 0;
    this.starting = projects.slice(0, left);
    // The hour after this run's starts: the last perHour of them, oldest first.
    const window = [...recent, ...this.starting.map(() => now)].slice(-this.perHour);
    this.waiting = new Map(
      projects.slice(left).map((target, k) => {
        if (this.blockedUntil !== undefined) return [target, new Date(this.blockedUntil)];
        const hours = Math.floor(k / this.perHour) + 1;
        return [target, new Date((window[k % this.perHour] ?? now) + hours * HOUR_MS)];
      }),
    );
  }

  /**
   * Starts `target` through `startExport` if the plan and the platform let it, waiting out a busy
   * project (409) like `export`, and records every start; else throws StartWaiting.
   */
  async start(
    target: SyncTarget,
    startExport: (site: SyncSite) => Promise<StartedExport>,
    busy: BusyOptions,
  ): Promise<StartedExport> {
    const { site } = target;
    const project = oneJobAtATimeOf(site);
    if (!countsStarts(target) || project === undefined) return startExport(site);
    const slot = this.waiting.get(target);
    if (slot !== undefined) {
      if (this.blockedUntil !== undefined) throw this.refused(this.blockedUntil);
      throw this.noShare(slot.getTime(), this.used);
    }
    if (this.mayExist.has(project)) {
      throw new CliError(
        EXIT.unavailable,
        `not started: an export start of project ${project} earlier in this run may have created a job (see above); ` +
          'run again in a few minutes.',
      );
    }
    try {
      return await startWhenFree(() => this.send(target, project, () => startExport(site)), {
        timeoutMs: busy.timeoutMs,
        what: target.name,
        onBusy: (delayMs, error) => busy.onBusy(target, delayMs, error),
        earlierBusy: this.record.busyAnswers(project, Date.now()),
      });
    } catch (error) {
      if (startMayHaveCreatedJob(error)) {
        this.mayExist.add(project);
        throw startMayHaveCreated(target.name, error as AdminApiError);
      }
      throw error;
    }
  }

  /** One start request: a slot of the record taken first, its outcome recorded after. */
  private send(
    target: SyncTarget,
    project: string,
    request: () => Promise<StartedExport>,
  ): Promise<StartedExport> {
    const sent = this.sending.then(async () => {
      if (this.blockedUntil !== undefined) throw this.refused(this.blockedUntil);
      const slot = await this.record.reserve(target.name, Date.now(), project);
      if (!('id' in slot)) {
        if (slot.reason === 'startBudget') throw this.noShare(slot.until, slot.used);
        this.blockedUntil = slot.until;
        throw this.refused(slot.until);
      }
      try {
        const started = await request();
        await this.record.settle(slot.id, 'started', Date.now());
        return started;
      } catch (error) {
        const now = Date.now();
        await this.record.settle(slot.id, outcomeOf(error), now);
        if (!(error instanceof ExportStartLimitError)) throw error;
        // Held back before the next start request is sent, and recorded for later runs. Without a
        // Retry-After: until the oldest start this group knows of leaves the hour; an hour at most.
        const until = Math.min(
          now + HOUR_MS,
          error.retryAfterMs === undefined
            ? (this.record.recent(now)[0] ?? now) + HOUR_MS
            : now + error.retryAfterMs,
        );
        this.blockedUntil = Math.max(this.blockedUntil ?? 0, until);
        await this.record.block(this.blockedUntil, now);
        throw this.refused(this.blockedUntil);
      }
    });
    this.sending = sent.catch(() => undefined);
    return sent;
  }

  private noShare(until: number, used: number): StartWaiting {
    return new StartWaiting(
      new Date(until),
      'startBudget',
      `waits: group ${this.group} made ${used} of the ${this.perHour} export starts an hour its share allows ` +
        `in the last hour (${this.record.file}, this run's and other runs' starts) and the sites before it take the rest; ` +
        `the next start for it is possible at ${iso(until)}`,
    );
  }

  private refused(until: number): StartWaiting {
    return new StartWaiting(
      new Date(until),
      'rateLimited',
      `waits: the platform refused an export start (429): the organization's ${EXPORT_STARTS_PER_HOUR} starts an hour are ` +
        'used up, by this tool or others of the organization (the operator, the dashboard, other keys); no more starts ' +
        `this run, and ${this.record.file} holds later runs back too; the next is possible at ${iso(until)}`,
    );
  }
}
