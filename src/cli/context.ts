/** What a command may touch of the outside world; tests can pass their own streams and environment. */
export interface CliContext {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export function processContext(): CliContext {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}
