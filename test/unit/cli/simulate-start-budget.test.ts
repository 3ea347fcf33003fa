// `static-export simulate` flags that show what the hourly start budget meets on the platform, each
// exercised through the production client: keys of one organization sharing the hour, 409s that
// count, an unknown project (404 without a body), a start that creates the job and answers 502, a
// failing job, and the per-minute limit's own 429.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  AdminApiClient,
  AdminApiError,
  ExportBusyError,
  ExportStartLimitError,
  ProjectNotFoundError,
  RateLimitedError,
  ServerError,
  startMayHaveCreatedJob,
} from '../../../src/api/index.ts';
import { rejectionOf } from '../../support/rejection.ts';
import { MAIN, NODE } from '../../support/tools/run-cli.ts';

const KEY = 'mint_firstkeyoftheorg00000';
const SECOND = 'mint_secondkeyoftheorg0000';
const GATEWAY = 'gateway';

let child: ReturnType<typeof spawn>;
let baseUrl: string;
const clients: AdminApiClient[] = [];

function client(apiKey: string, maxRetryAfterMs = 0): AdminApiClient {
  const c = new AdminApiClient({
    baseUrl,
    apiKey,
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10, maxRetryAfterMs },
  });
  clients.push(c);
  return c;
}

/** The admin API error a call failed with (the test fails if it succeeded). */
const caught = (promise: Promise<unknown>) => rejectionOf(promise, AdminApiError);

beforeAll(async () => {
  child = spawn(
    NODE,
    [
      MAIN,
      'simulate',
      '--json',
      '--api-revision',
      '2',
      '--export-duration',
      '200ms',
      '--key',
      KEY,
      '--organization-key',
      SECOND,
      '--unknown-project',
      'ghost',
      '--count-conflicts',
      '--fault',
      `start@${GATEWAY}:created=502:1:1`,
      '--fault',
      'start@broken:fail:1',
      '--fault',
      'start@minute:429:1:1',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    },
  );
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [
    string,
  ];
  baseUrl = (JSON.parse(line) as { baseUrl: string }).baseUrl;
}, 30_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  child.kill('SIGTERM');
});

it('shows each of them through the production client, the organization’s hour spent by both keys and a 409', async () => {
  const first = client(KEY);
  const second = client(SECOND, 3000);

  // 404 without a body: the project is unknown.
  expect(await caught(first.startExport({ projectId: 'ghost' }))).toBeInstanceOf(ProjectNotFoundError);

  // The job is created, the answer is 502: may have started, and it has.
  const gateway = await caught(first.startExport({ projectId: GATEWAY }));
  expect(gateway).toBeInstanceOf(ServerError);
  expect(startMayHaveCreatedJob(gateway)).toBe(true);
  expect(await caught(first.startExport({ projectId: GATEWAY }))).toBeInstanceOf(ExportBusyError);

  // The per-minute limit's 429 is waited out (Retry-After: 1) and the start sent again.
  await expect(second.startExport({ projectId: 'minute' })).resolves.toMatchObject({ status: 'queued' });

  // A failing job.
  const broken = await first.startExport({ projectId: 'broken' });
  let status = await first.getExport({ revision: 'current', projectId: 'broken', jobId: broken.jobId });
  for (let i = 0; i < 100 && status.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await first.getExport({ revision: 'current', projectId: 'broken', jobId: broken.jobId });
  }
  expect(status).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Export failed/) });

  // Spent so far: gateway, its 409 (counted), minute, broken = 4. Six more across both keys.
  for (let n = 0; n < 3; n++) await first.startExport({ projectId: `a${n}` });
  for (let n = 0; n < 3; n++) await second.startExport({ projectId: `b${n}` });
  const limited = await caught(second.startExport({ projectId: 'c0' }));
  expect(limited).toBeInstanceOf(ExportStartLimitError);
  expect(limited).toBeInstanceOf(RateLimitedError);
  expect(await caught(first.startExport({ projectId: 'c1' }))).toBeInstanceOf(ExportStartLimitError);
}, 30_000);
