// `mirror sync`'s record of the export starts it made, kept in a file from run to run. The current
// API revision allows 10 starts per organization and hour and tells no one how many are left, so a
// run plans within what the starts its group recorded in the last hour leave. Starts made elsewhere
// (the operator, the dashboard, another machine) are not in it: a 429 still stops a run, and its
// block is recorded so the next run does not meet it again.
//
// Several runs may share the file (overlapping cron jobs): every change takes an exclusive lock
// file, reads the record afresh and writes it whole through a new temporary file, so no run loses
// another's starts. A start is recorded before its request goes out (a reservation) and only taken
// back when its outcome is certainly "nothing was started and nothing counted".
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { z } from 'zod';
import { HOUR_MS, inWindow, windowDelayMs } from '../api/sliding-window.ts';
import { EXPORT_STARTS_PER_HOUR } from '../project.ts';
import { wait } from '../timers.ts';
import { usageError } from './exit-codes.ts';

/** How long a run waits for another to release the lock (it holds it for a read and a write). */
const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a run that died while holding it. */
const LOCK_STALE_MS = 60_000;
const LOCK_POLL_MS = 25;

/**
 * What became of a start: `sent` while its answer is awaited, `started` (202), `busy` (409),
 * `refused` (429) and `unknown` (an answer that may follow the job's creation: 5xx, a connection
 * lost after the request was written). Each counts toward the hour: the platform does not say
 * whether a refused start counts, so the project assumes it may.
 */
export type StartOutcome = 'sent' | 'started' | 'busy' | 'refused' | 'unknown';

const StartSchema = z.strictObject({
  /** The start budget group (--starts-group, else the admin key's digest). Absent: written before groups, counts for every group. */
  group: z.string().optional(),
  /** Records written before groups named the key with the API URL; kept as written. */
  key: z.string().optional(),
  id: z.string().optional(),
  at: z.iso.datetime(),
  site: z.string(),
  /** The project started (a site is a project and a base path): 409s are per project. */
  project: z.string().optional(),
  outcome: z.enum(['sent', 'started', 'busy', 'refused', 'unknown']).optional(),
});
const BlockSchema = z.strictObject({ group: z.string(), until: z.iso.datetime() });
const StartRecordSchema = z.strictObject({
  starts: z.array(StartSchema),
  blocks: z.array(BlockSchema).optional(),
});
type Start = z.infer<typeof StartSchema>;
type Block = z.infer<typeof BlockSchema>;
interface Contents {
  starts: Start[];
  blocks: Block[];
}

/** The default group: the admin key's digest (never the key), whatever URL names the platform. */
export function keyGroup(apiKey: string): string {
  return `key-${createHash('sha256').update(apiKey).digest('hex').slice(0, 12)}`;
}

/** A reserved start (`id`), or when the group may start again. */
export type Reservation =
  | { id: string }
  | { until: number; reason: 'startBudget' | 'rateLimited'; used: number };

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error);

export class StartRecord {
  readonly file: string;
  readonly group: string;
  /** The share of the organization's hour this group may use. */
  readonly perHour: number;
  private contents: Contents;

  private constructor(file: string, group: string, perHour: number, contents: Contents) {
    this.file = file;
    this.group = group;
    this.perHour = perHour;
    this.contents = contents;
  }

  /**
   * Reads the record (none yet: empty), drops what is over an hour old and writes it back under
   * the lock, so a file that cannot be read, locked or written fails the run before any start.
   */
  static async open(
    file: string,
    group: string,
    now: number,
    perHour: number = EXPORT_STARTS_PER_HOUR,
  ): Promise<StartRecord> {
    const record = new StartRecord(file, group, perHour, { starts: [], blocks: [] });
    await record.update(() => true, now);
    return record;
  }

  /** The times of this group's starts within the hour before `now`, oldest first. */
  recent(now: number): number[] {
    return this.mine(now).map((s) => Date.parse(s.at));
  }

  /** The times of this group's 409s for `project` in the hour before `now`, oldest first. */
  busyAnswers(project: string, now: number): number[] {
    return this.mine(now)
      .filter((s) => s.project === project && s.outcome === 'busy')
      .map((s) => Date.parse(s.at));
  }

  /** Until when the platform's last 429 holds this group's starts back (undefined: not held). */
  blockedUntil(now: number): number | undefined {
    const until = Math.max(
      0,
      ...this.contents.blocks.filter((b) => b.group === this.group).map((b) => Date.parse(b.until)),
    );
    return until > now ? until : undefined;
  }

  /** Starts the group's share of the hour still allows at `now`. */
  left(now: number): number {
    return Math.max(0, this.perHour - this.recent(now).length);
  }

  /**
   * Records a start of `site` (of `project`) about to be sent, if the group's share and the last
   * 429 allow one now (decided on the record as it is in the file, other runs' starts included).
   */
  async reserve(site: string, now: number, project?: string): Promise<Reservation> {
    const id = randomBytes(6).toString('hex');
    let answer: Reservation = { id };
    await this.update((c) => {
      const blocked = this.blockedUntil(now);
      if (blocked !== undefined) {
        answer = { until: blocked, reason: 'rateLimited', used: this.recent(now).length };
        return false;
      }
      const recent = this.recent(now);
      const waitMs = windowDelayMs(recent, this.perHour, now, HOUR_MS);
      if (waitMs > 0) {
        answer = { until: now + waitMs, reason: 'startBudget', used: recent.length };
        return false;
      }
      c.starts.push({
        group: this.group,
        id,
        at: new Date(now).toISOString(),
        site,
        ...(project === undefined ? {} : { project }),
        outcome: 'sent',
      });
      return true;
    }, now);
    return answer;
  }

  /** Says what became of a reserved start; `none`: nothing reached the platform, the slot is free again. */
  settle(id: string, outcome: Exclude<StartOutcome, 'sent'> | 'none', now: number): Promise<void> {
    return this.update((c) => {
      const index = c.starts.findIndex((s) => s.id === id);
      if (index === -1) return false;
      if (outcome === 'none') c.starts.splice(index, 1);
      else c.starts[index] = { ...(c.starts[index] as Start), outcome };
      return true;
    }, now);
  }

  /** Records the platform's 429: no start of the group until `until` (an hour at most). */
  block(until: number, now: number): Promise<void> {
    return this.update((c) => {
      const kept = c.blocks.filter((b) => b.group !== this.group || Date.parse(b.until) > until);
      c.blocks = kept.some((b) => b.group === this.group)
        ? kept
        : [...kept, { group: this.group, until: new Date(Math.min(until, now + HOUR_MS)).toISOString() }];
      return true;
    }, now);
  }

  private mine(now: number): Start[] {
    return this.contents.starts
      .filter((s) => s.group === undefined || s.group === this.group)
      .filter((s) => inWindow(Date.parse(s.at), now, HOUR_MS))
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  }

  /**
   * Under the lock: reads the file afresh into `contents`, lets `change` edit it (true: write it
   * back) and writes it whole through a new temporary file.
   */
  private async update(change: (c: Contents) => boolean, now: number): Promise<void> {
    const release = await this.lock(now);
    try {
      this.contents = await this.read(now);
      if (change(this.contents)) await this.write();
    } finally {
      await release();
    }
  }

  /** The record as the file holds it: nothing dated after `now`, nothing over an hour old. */
  private async read(now: number): Promise<Contents> {
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a FIFO planted at the path would block the open forever.
      handle = await open(this.file, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (error) {
      if (errno(error) === 'ENOENT') return { starts: [], blocks: [] };
      throw usageError(`--starts-file ${this.file} cannot be read: ${errno(error)}.`);
    }
    let text: string;
    try {
      if (!(await handle.stat()).isFile()) {
        throw usageError(
          `--starts-file ${this.file} is not a regular file (a directory, FIFO or device): name a file static-export may write.`,
        );
      }
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    let parsed: ReturnType<typeof StartRecordSchema.safeParse>;
    try {
      parsed = StartRecordSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = StartRecordSchema.safeParse(undefined);
    }
    if (!parsed.success) {
      throw usageError(
        `--starts-file ${this.file} is not a record of export starts (static-export writes it: {"starts": [...]}); ` +
          "restore it, or name another file (an empty record counts none of the last hour's starts).",
      );
    }
    const clamp = (at: string, latest: number) => new Date(Math.min(Date.parse(at), latest)).toISOString();
    return {
      // A start dated in the future (a wrong clock, a hand edit) counts as made now, not until then.
      starts: parsed.data.starts
        .map((s) => ({ ...s, at: clamp(s.at, now) }))
        .filter((s) => inWindow(Date.parse(s.at), now, HOUR_MS)),
      // The platform's hourly block lasts an hour at most.
      blocks: (parsed.data.blocks ?? [])
        .map((b) => ({ ...b, until: clamp(b.until, now + HOUR_MS) }))
        .filter((b) => Date.parse(b.until) > now),
    };
  }

  private async write(): Promise<void> {
    // A new name, created exclusively and never through a symlink: nothing planted at a predictable
    // path is followed or overwritten.
    const temp = `${this.file}.${randomBytes(8).toString('hex')}.tmp`;
    try {
      const handle = await open(
        temp,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        await handle.writeFile(`${JSON.stringify(this.contents, null, 2)}\n`);
      } finally {
        await handle.close();
      }
      await rename(temp, this.file);
    } catch (error) {
      await rm(temp, { force: true });
      throw usageError(
        `--starts-file ${this.file} cannot be written: ${errno(error)}; ` +
          'name a writable file (it keeps the export starts of the last hour between runs).',
      );
    }
  }

  /**
   * Takes `<file>.lock` (created exclusively, holding this process's host, pid and time), waiting
   * at most LOCK_WAIT_MS for another run to let it go. A lock whose process is gone (same host) or
   * that is older than LOCK_STALE_MS is removed: its run died holding it.
   */
  private async lock(now: number): Promise<() => Promise<void>> {
    const path = `${this.file}.lock`;
    const nonce = randomBytes(8).toString('hex');
    const mine = JSON.stringify({
      host: hostname(),
      pid: process.pid,
      at: new Date(now).toISOString(),
      nonce,
    });
    // Real time, not Date.now: the wait is about other processes, whatever clock this one runs on.
    const began = performance.now();
    for (;;) {
      try {
        const handle = await open(
          path,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o600,
        );
        try {
          await handle.writeFile(mine);
        } finally {
          await handle.close();
        }
        return async () => {
          // Only our own lock is removed (a stale-lock breaker may have replaced it).
          if ((await readFile(path, 'utf8').catch(() => '')) === mine) await rm(path, { force: true });
        };
      } catch (error) {
        if (errno(error) !== 'EEXIST') {
          throw usageError(
            `--starts-file ${this.file} cannot be locked (${path}): ${errno(error)}; name a file in a writable directory.`,
          );
        }
      }
      const holder = await readFile(path, 'utf8').catch(() => '');
      if (await isStale(path, holder)) {
        // Removed only if it still is the lock just judged stale.
        if ((await readFile(path, 'utf8').catch(() => '')) === holder) await rm(path, { force: true });
        continue;
      }
      if (performance.now() - began > LOCK_WAIT_MS) {
        throw usageError(
          `--starts-file ${this.file} is locked by another run (${path}: ${holder.slice(0, 200)}) for more than ` +
            `${LOCK_WAIT_MS / 1000} s: if no other static-export runs, delete ${path}.`,
        );
      }
      await wait(LOCK_POLL_MS);
    }
  }
}

/** A lock left by a process that no longer runs on this host, or older than LOCK_STALE_MS. */
async function isStale(path: string, holder: string): Promise<boolean> {
  const age = await stat(path).then(
    (s) => performance.timeOrigin + performance.now() - s.mtimeMs,
    () => 0,
  );
  if (age > LOCK_STALE_MS) return true;
  let owner: { host?: unknown; pid?: unknown };
  try {
    owner = JSON.parse(holder) as typeof owner;
  } catch {
    // Being written right now (empty), or not ours: only its age can tell.
    return false;
  }
  if (owner.host !== hostname() || typeof owner.pid !== 'number') return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return errno(error) === 'ESRCH';
  }
}
