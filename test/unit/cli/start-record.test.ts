// --starts-file as a hostile or careless machine leaves it: a FIFO at the path, starts dated 9999,
// a symlink planted where the temporary file would go, a lock left by a run that died or held by
// one that runs. In process (the record is a file; what is planted sits beside it).
import { execFileSync, spawnSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ExportBusyError,
  ExportStartLimitError,
  InvalidResponseError,
  NetworkError,
  ProjectNotFoundError,
  RateLimitedError,
  ServerError,
} from '../../../src/api/errors.ts';
import { CliError } from '../../../src/cli/exit-codes.ts';
import { outcomeOf, StartPlan, StartWaiting } from '../../../src/cli/start-plan.ts';
import { StartRecord } from '../../../src/cli/start-record.ts';
import { parseSyncConfig } from '../../../src/oci/sync.ts';

let work: string;
let n = 0;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'start-record-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function scratch(): Promise<string> {
  const dir = join(work, `d${n++}`);
  await mkdir(dir);
  return join(dir, 'starts.json');
}

const HOUR = 3_600_000;

describe('StartRecord', () => {
  it('refuses a FIFO at the path at once instead of hanging, naming --starts-file', async () => {
    const file = await scratch();
    execFileSync('mkfifo', [file]);
    const opened = StartRecord.open(file, 'g', Date.now());
    const hung = new Promise((resolve) => setTimeout(() => resolve('hung'), 3000));
    const outcome = await Promise.race([
      opened.then(
        () => 'opened',
        (e: unknown) => e,
      ),
      hung,
    ]);
    expect(outcome).toBeInstanceOf(CliError);
    expect((outcome as CliError).message).toContain(`--starts-file ${file} is not a regular file`);
    expect((outcome as CliError).exitCode).toBe(2);
  });

  it('counts a start dated in the future as made now, and a block as an hour at most', async () => {
    const file = await scratch();
    await writeFile(
      file,
      JSON.stringify({
        starts: [{ group: 'g', at: '9999-01-01T00:00:00.000Z', site: 'project far' }],
        blocks: [{ group: 'g', until: '9999-01-01T00:00:00.000Z' }],
      }),
    );
    const now = Date.now();
    const record = await StartRecord.open(file, 'g', now);
    expect(record.recent(now)).toEqual([now]);
    // Free again within the hour, not in 9999.
    expect(record.blockedUntil(now)).toBe(now + HOUR);
    expect(record.recent(now + HOUR + 1)).toEqual([]);
    const written = JSON.parse(await readFile(file, 'utf8')) as { starts: { at: string }[] };
    expect(Date.parse(written.starts[0]?.at ?? '')).toBe(now);
  });

  it('never follows a symlink planted where a temporary file could go', async () => {
    const file = await scratch();
    const victim = join(work, `victim${n++}`);
    await writeFile(victim, 'precious\n');
    // The name the record's temporary file had (<file>.<pid>.tmp), and a plain <file>.tmp.
    await symlink(victim, `${file}.${process.pid}.tmp`);
    await symlink(victim, `${file}.tmp`);
    const record = await StartRecord.open(file, 'g', Date.now());
    const reserved = await record.reserve('project x', Date.now());
    expect(reserved).toHaveProperty('id');
    expect(await readFile(victim, 'utf8')).toBe('precious\n');
    expect((await lstat(file)).isFile()).toBe(true);
    expect(((await lstat(file)).mode & 0o777).toString(8)).toBe('600');
    // No temporary file left behind, the planted links untouched.
    const dir = join(file, '..');
    expect((await readdir(dir)).sort()).toEqual(
      ['starts.json', `starts.json.${process.pid}.tmp`, 'starts.json.tmp'].sort(),
    );
  });

  it('removes a lock left by a process that is gone, and waits for one that runs (then says who holds it)', async () => {
    const file = await scratch();
    const gone = spawnSync(process.execPath, ['-e', 'process.pid']).pid;
    await writeFile(
      `${file}.lock`,
      JSON.stringify({ host: hostname(), pid: gone, at: new Date().toISOString(), nonce: 'x' }),
    );
    const record = await StartRecord.open(file, 'g', Date.now());
    await expect(lstat(`${file}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });

    // A live holder (this process): the run waits, bounded, and names the lock file.
    await writeFile(
      `${file}.lock`,
      JSON.stringify({ host: hostname(), pid: process.pid, at: new Date().toISOString(), nonce: 'y' }),
    );
    const began = performance.now();
    const error = await record.reserve('project y', Date.now()).catch((e: unknown) => e);
    expect(performance.now() - began).toBeGreaterThan(9_000);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toContain(`is locked by another run (${file}.lock`);
    expect((error as CliError).message).toContain(`delete ${file}.lock`);
    // Nothing was reserved: a start is never made without its record.
    await rm(`${file}.lock`);
    expect(record.recent(Date.now())).toEqual([]);
  }, 20_000);

  it('counts the starts of records written before groups for every group', async () => {
    const file = await scratch();
    await writeFile(
      file,
      JSON.stringify({
        starts: [{ key: '0123456789ab', at: new Date().toISOString(), site: 'project old' }],
      }),
    );
    const record = await StartRecord.open(file, 'any-group', Date.now(), 1);
    expect(record.left(Date.now())).toBe(0);
    const reserved = await record.reserve('project new', Date.now());
    expect(reserved).toMatchObject({ reason: 'startBudget', used: 1 });
  });

  it('holds a group back an hour at most after a 429 whose Retry-After is absurd, and records the block', async () => {
    const file = await scratch();
    const { targets } = parseSyncConfig('target: oci://memory.test/docs\ndomains:\n  - projectId: p\n', file);
    const now = Date.now();
    const record = await StartRecord.open(file, 'g', now);
    const plan = new StartPlan(targets, record, now);
    const refused = () =>
      Promise.reject(
        new ExportStartLimitError('limit', {
          operation: 'startExport',
          status: 429,
          retryAfterMs: 99999999999999e3,
        }),
      );
    const error = await plan
      .start(targets[0] as (typeof targets)[number], refused, { timeoutMs: 1000, onBusy: () => {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartWaiting);
    const until = (error as StartWaiting).notBefore.getTime();
    expect(until).toBeGreaterThan(now);
    expect(until).toBeLessThanOrEqual(Date.now() + HOUR);
    const written = JSON.parse(await readFile(file, 'utf8')) as {
      starts: { outcome: string }[];
      blocks: unknown[];
    };
    expect(written.starts.map((s) => s.outcome)).toEqual(['refused']);
    expect(written.blocks).toEqual([{ group: 'g', until: new Date(until).toISOString() }]);
  });
});

describe('outcomeOf', () => {
  it('frees the slot only when nothing can have reached the platform', () => {
    const init = { operation: 'startExport' as const };
    expect(outcomeOf(new ExportBusyError('busy', { ...init, status: 409 }))).toBe('busy');
    expect(outcomeOf(new ExportStartLimitError('limit', { ...init, status: 429 }))).toBe('refused');
    expect(outcomeOf(new RateLimitedError('slot', { ...init, clientSide: true }))).toBe('none');
    expect(outcomeOf(new ServerError('bad gateway', { ...init, status: 502 }))).toBe('unknown');
    expect(outcomeOf(new NetworkError('reset', { ...init, beforeRequestSent: false }))).toBe('unknown');
    expect(outcomeOf(new NetworkError('refused', { ...init, beforeRequestSent: true }))).toBe('none');
    expect(outcomeOf(new ProjectNotFoundError('unknown project', { ...init, status: 404 }))).toBe('none');
    // A 202 whose body the client refused started a job all the same.
    expect(outcomeOf(new InvalidResponseError('no job id', { ...init, status: 202, field: 'jobId' }))).toBe(
      'unknown',
    );
  });
});
