/** What a command may touch of the outside world; tests can pass their own streams and environment. */
export interface CliContext {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export function processContext(): CliContext {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/** Resolves on the first SIGINT or SIGTERM: long-running commands then shut down cleanly. */
export async function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
}
