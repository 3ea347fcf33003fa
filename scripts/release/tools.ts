// The external tools a release runs (helm, skopeo, cosign, npm), found once and run with errors
// reduced to one line.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from '../run-process.ts';
import { ReleaseError } from './errors.ts';

const INSTALL = {
  helm: 'run npm ci (it unpacks helm into .tools/bin) or install Helm 3.8+',
  skopeo: 'install skopeo (Debian/Ubuntu: apt-get install skopeo)',
  cosign:
    'install cosign v2 (https://docs.sigstore.dev/cosign/system_config/installation/) or set COSIGN to its path',
  npm: 'install npm',
} as const;
export type ToolName = keyof typeof INSTALL;
export type Tools = Record<ToolName, string>;

async function onPath(name: string): Promise<boolean> {
  return (await runProcess('sh', ['-c', `command -v "$1"`, 'sh', name])).code === 0;
}

/** Every tool's path: the repository's helm, COSIGN or cosign, and the rest from the PATH. */
export async function findTools(root: string): Promise<Tools> {
  const repoHelm = join(root, '.tools/bin/helm');
  const tools: Tools = {
    helm: existsSync(repoHelm) ? repoHelm : 'helm',
    skopeo: 'skopeo',
    cosign: process.env.COSIGN ?? 'cosign',
    npm: 'npm',
  };
  for (const [name, path] of Object.entries(tools) as [ToolName, string][]) {
    if (!(existsSync(path) || (await onPath(path)))) {
      throw new ReleaseError(`${name} not found: ${INSTALL[name]}`);
    }
  }
  return tools;
}

/**
 * Runs `tool` and returns what it printed; a failure is a ReleaseError with the tool's error line
 * (argument lists never hold a secret: keys are files or env:// references, passwords are env).
 */
export async function runTool(
  what: string,
  tool: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const result = await runProcess(tool, args, { cwd: options.cwd, env: options.env ?? process.env });
  if (result.code !== 0) {
    const lines = `${result.stderr}\n${result.stdout}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const line = lines.find((l) => /error|fatal/i.test(l)) ?? lines.at(-1) ?? `${tool} exited ${result.code}`;
    throw new ReleaseError(`${what} failed: ${line}`);
  }
  return `${result.stdout}${result.stderr}`;
}
