import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('ends quietly with exit 0 when its output pipe closes early (static-export --help | head -1)', async () => {
  const child = spawn(process.execPath, [join(import.meta.dirname, '../../../src/cli/main.ts'), '--help']);
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  // Closed before the child writes anything, like `head` that has already exited.
  child.stdout.destroy();
  const code = await new Promise((r) => child.once('exit', r));
  expect(stderr).not.toMatch(/EPIPE|Unhandled/);
  expect(code).toBe(0);
});
