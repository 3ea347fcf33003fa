// Runs `npm run release` (scripts/release.ts) with the project's Node 24, as a maintainer would,
// with a clean environment: PATH, HOME and only what `env` adds.
import { fileURLToPath } from 'node:url';
import { type ProcessResult, runProcess } from '../../../scripts/run-process.ts';
import { NODE } from './run-cli.ts';

const RELEASE = fileURLToPath(new URL('../../../scripts/release.ts', import.meta.url));

export function runRelease(args: string[], env: Record<string, string>): Promise<ProcessResult> {
  const cache = process.env.STATIC_EXPORT_CACHE;
  return runProcess(NODE, [RELEASE, ...args], {
    env: { PATH: process.env.PATH ?? '', ...(cache ? { STATIC_EXPORT_CACHE: cache } : {}), ...env },
  });
}
