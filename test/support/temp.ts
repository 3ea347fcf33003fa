// Temporary directories that go when the test file is done, a failed test's too. This module is
// imported before a test file's own hooks are registered, so this afterAll runs after them (hooks
// run as a stack): whatever uses a directory (an operator, a simulator) has stopped by then.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { DEFAULT_DOCS_DIR } from '../../src/simulator/index.ts';

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system temp directory, named `prefix…`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A copy of the sample docs that a test may edit, for a simulator to serve. */
export function sampleDocsCopy(): string {
  const dir = tempDir('docs-');
  cpSync(DEFAULT_DOCS_DIR, dir, { recursive: true });
  return dir;
}
