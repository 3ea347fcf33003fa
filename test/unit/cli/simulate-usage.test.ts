// `static-export simulate` refusals a flag can fix: one line naming the flag, exit 2, no stack trace.
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { runCli } from '../../support/tools/run-cli.ts';

it('a port in use: one line naming --port, exit 2', { timeout: 30_000 }, async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  try {
    const r = await runCli(['simulate', '--port', String(port)]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe(
      `error: --port ${port}: 127.0.0.1:${port} is already in use; stop what listens there or pick another port (0 picks a free one).`,
    );
  } finally {
    taken.close();
  }
});

it('a --key that is no admin key: exit 2, advice to choose one rather than the dashboard', {
  timeout: 30_000,
}, async () => {
  const r = await runCli(['simulate', '--key', 'notmint']);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain(
    `--key: not an admin key: the simulator takes any key of the platform's admin key form`,
  );
  expect(r.stderr).not.toMatch(/dashboard settings|\n\s+at /);
});
