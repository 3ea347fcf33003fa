// `static-export simulate --key-file` on a Secret volume (the simulator chart's pod): a key the
// kubelet rewrites takes effect without a restart, jobs surviving it; a file that cannot be read or
// holds no key keeps the key before, with a warning that names the file and never its content.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { writeSecretVolume } from '../../support/fixtures/secret-volume.ts';
import { tempDir } from '../../support/temp.ts';
import { MAIN, NODE } from '../../support/tools/run-cli.ts';

const OLD = 'mint_before0123456789';
const NEW = 'mint_rotated0123456789';

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGTERM');
});

async function simulate(keyDir: string) {
  const child = spawn(
    NODE,
    // The contract's revision: its paths are the ones probed below.
    [
      MAIN,
      'simulate',
      '--api-revision=1',
      '--json',
      '--export-duration=0s',
      '--key-file',
      join(keyDir, 'adminKey'),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        STATIC_EXPORT_LOG_LEVEL: 'info',
      },
    },
  );
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const { baseUrl } = JSON.parse(line) as { baseUrl: string };
  /** The status of an admin request with `key`: 404 for a job nobody started means the key was accepted. */
  const statusWith = async (key: string, path = '/v1/static-export/jobs/none') => {
    const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    return res.status;
  };
  /** Waits until the log says `text` (the file is read every 2 s; a busy machine may take longer). */
  const logged = async (text: string) => {
    const deadline = Date.now() + 15_000;
    while (!stderr.includes(text)) {
      if (Date.now() > deadline)
        throw new Error(`the simulator did not log "${text}"; it logged:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { statusWith, baseUrl, logged, stderr: () => stderr };
}

it('accepts the rotated key once the kubelet rewrote the file, no longer the old one, and keeps its jobs', {
  timeout: 60_000,
}, async () => {
  const keyDir = tempDir('secret-volume-');
  await writeSecretVolume(keyDir, { adminKey: `${OLD}\n` });
  const sim = await simulate(keyDir);
  expect(await sim.statusWith(OLD)).toBe(404);
  const started = await fetch(`${sim.baseUrl}/v1/static-export/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OLD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain: 'docs.example.com' }),
  });
  const { jobId } = (await started.json()) as { jobId: string };

  await writeSecretVolume(keyDir, { adminKey: `${NEW}\n` });
  await sim.logged('the admin key changed');
  expect(await sim.statusWith(NEW)).toBe(404);
  expect(await sim.statusWith(OLD)).toBe(401);
  // The simulator was not restarted: the job started with the old key is still there.
  expect(await sim.statusWith(NEW, `/v1/static-export/jobs/${jobId}`)).toBe(200);
  expect(sim.stderr()).not.toContain(NEW);
  expect(sim.stderr()).not.toContain(OLD);
});

it('keeps the key before when the file holds no admin key or is gone, warning once without its content, then takes a good one', {
  timeout: 90_000,
}, async () => {
  const keyDir = tempDir('secret-volume-');
  const keyFile = join(keyDir, 'adminKey');
  await writeSecretVolume(keyDir, { adminKey: OLD });
  const sim = await simulate(keyDir);

  await writeSecretVolume(keyDir, { adminKey: 'dsc_public 0123456789\n' });
  await sim.logged('still accepted');
  expect(sim.stderr()).toContain(
    `--key-file ${keyFile}: not an admin key (it holds whitespace, often a trailing line break): the simulator takes`,
  );
  expect(sim.stderr()).not.toContain('dsc_public');
  expect(await sim.statusWith(OLD)).toBe(404);
  expect(await sim.statusWith('dsc_public')).toBe(401);

  // A Secret without the key: the kubelet's link to it dangles.
  await writeSecretVolume(keyDir, {});
  await sim.logged(`--key-file ${keyFile} cannot be read: ENOENT`);
  expect(await sim.statusWith(OLD)).toBe(404);
  // Polled every 2 s: a reason already given is not repeated.
  await new Promise((r) => setTimeout(r, 4_500));
  expect(sim.stderr().match(/cannot be read/g)).toHaveLength(1);

  await writeSecretVolume(keyDir, { adminKey: NEW });
  await sim.logged('the admin key changed');
  expect(await sim.statusWith(NEW)).toBe(404);
  expect(await sim.statusWith(OLD)).toBe(401);
});
