// The Go-built test tools of scripts/go-tools/tools.env (registry, cosign, kstatus-check, the GitOps
// CRDs): build.sh builds or fetches one once per version and prints its path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from '../../../scripts/run-process.ts';

const GO_TOOLS = fileURLToPath(new URL('../../../scripts/go-tools/', import.meta.url));

/** Path of a tool from tools.env (built on first use: minutes on a fresh machine, then cached). */
export async function goTool(name: string): Promise<string> {
  const result = await runProcess('bash', [join(GO_TOOLS, 'build.sh'), name]);
  if (result.code !== 0) throw new Error(`building ${name} failed:\n${result.stderr.slice(-3000)}`);
  return result.stdout.trim();
}

/** Every tool tools.env names. */
export function goToolNames(): string[] {
  return readFileSync(join(GO_TOOLS, 'tools.env'), 'utf8')
    .split('\n')
    .flatMap((line) => /^([a-z0-9-]+)=/.exec(line)?.[1] ?? []);
}
