// vitest global setup of both projects: builds (or finds cached) every Go-built test tool before a
// test starts, one after the other, so a fresh machine's first builds (cosign takes about ten minutes
// on two cores) run once and under no test's timeout, not in several test files at the same time.
import { goTool, goToolNames } from './go-tools.ts';

export default async function setup(): Promise<void> {
  for (const name of goToolNames()) await goTool(name);
}
