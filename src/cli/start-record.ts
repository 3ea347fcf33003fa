// `mirror sync`'s record of the export starts it made, kept in a file from run to run. The current
// API revision allows 10 starts per organization and hour and tells no one how many are left, so a
// run plans within what the starts it recorded in the last hour leave. Starts made elsewhere with
// the key (the operator, the dashboard, another machine) are not in it: a 429 still stops a run.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { usageError } from './exit-codes.ts';

export const STARTS_PER_HOUR = 10;
export const HOUR_MS = 3_600_000;

/** `key` names the admin key by a digest prefix (AdminApiClient.keyId), never the key itself. */
const StartRecordSchema = z.strictObject({
  starts: z.array(z.strictObject({ key: z.string(), at: z.iso.datetime(), site: z.string() })),
});
type Start = z.infer<typeof StartRecordSchema>['starts'][number];

export class StartRecord {
  readonly file: string;
  private readonly key: string;
  private readonly starts: Start[];
  private writing: Promise<void> = Promise.resolve();

  private constructor(file: string, key: string, starts: Start[]) {
    this.file = file;
    this.key = key;
    this.starts = starts;
  }

  /**
   * Reads the record (none yet: empty), drops what is over an hour old and writes it back, so a
   * file that cannot be written fails the run before any start, not after.
   */
  static async open(file: string, key: string, now: number): Promise<StartRecord> {
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw usageError(`--starts-file ${file} cannot be read: ${code ?? error}.`);
    }
    let starts: Start[] = [];
    if (text !== undefined) {
      let parsed: ReturnType<typeof StartRecordSchema.safeParse>;
      try {
        parsed = StartRecordSchema.safeParse(JSON.parse(text));
      } catch {
        parsed = StartRecordSchema.safeParse(undefined);
      }
      if (!parsed.success) {
        throw usageError(
          `--starts-file ${file} is not a record of export starts (static-export writes it: {"starts": [...]}); ` +
            "restore it, or name another file (an empty record counts none of the last hour's starts).",
        );
      }
      starts = parsed.data.starts.filter((s) => Date.parse(s.at) > now - HOUR_MS);
    }
    const record = new StartRecord(file, key, starts);
    await record.save();
    return record;
  }

  /** The times of this key's starts within the hour before `now`, oldest first. */
  recent(now: number): number[] {
    return this.starts
      .filter((s) => s.key === this.key)
      .map((s) => Date.parse(s.at))
      .filter((at) => at > now - HOUR_MS)
      .sort((a, b) => a - b);
  }

  /** Starts the hour still allows at `now`. */
  left(now: number): number {
    return Math.max(0, STARTS_PER_HOUR - this.recent(now).length);
  }

  /** Records a start (written at once: a run cut short still counts it next time). */
  add(at: number, site: string): Promise<void> {
    this.starts.push({ key: this.key, at: new Date(at).toISOString(), site });
    this.writing = this.writing.then(() => this.save());
    return this.writing;
  }

  private async save(): Promise<void> {
    const temp = `${this.file}.${process.pid}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify({ starts: this.starts }, null, 2)}\n`, { mode: 0o600 });
      await rename(temp, this.file);
    } catch (error) {
      throw usageError(
        `--starts-file ${this.file} cannot be written: ${(error as NodeJS.ErrnoException).code ?? error}; ` +
          'name a writable file (it keeps the export starts of the last hour between runs).',
      );
    }
  }
}
