// Spawns the real CLI entry with the project's Node 24, as a user or an init container would.
import { fileURLToPath } from 'node:url';
import { type ProcessResult, runProcess } from '../../../scripts/run-process.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const NODE = `${ROOT}node_modules/.bin/node`;
export const MAIN = `${ROOT}src/cli/main.ts`;

export type CliResult = ProcessResult;

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  // A clean environment: no STATIC_EXPORT_* leaks in from the developer's shell.
  return runProcess(NODE, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
  });
}

/** The JSON lines of a --json run (those named `name` when given). */
export function jsonEvents(stdout: string, name?: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => name === undefined || e.event === name);
}
