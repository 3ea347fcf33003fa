// Runs a child process to its end and collects what it printed: the CLI tests, the site chart's
// local pod and the download benchmark all need exactly this.
import { type SpawnOptions, spawn } from 'node:child_process';

export interface ProcessResult {
  /** The exit code; null when a signal ended the process. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runProcess(
  command: string,
  args: readonly string[],
  options: Omit<SpawnOptions, 'stdio'> = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
