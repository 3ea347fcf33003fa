#!/usr/bin/env node
import './young-generation.ts';
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { scrub } from '../redact.ts';
import { terminalSafe } from '../terminal-text.ts';
import { type CliContext, processContext } from './context.ts';
import { CliError, EXIT, EXIT_CODES_HELP, exitCodeFor } from './exit-codes.ts';
import { Reporter } from './output.ts';

type RegisterCommand = (program: Command, ctx: CliContext) => void;

/**
 * Every subcommand registers itself from here, in the order `--help` lists them.
 * Registration only declares flags: heavy modules (API client, bundle pipeline, simulator) are
 * imported when a command runs, so `fetch` in an init container does not pay for the others. When
 * the arguments name a command, only its module is loaded: the long-running `operator` holds no
 * code of the other commands (docs/benchmarks/2026-11-22.md#idle-memory-footprint).
 */
const COMMANDS: Record<string, () => Promise<RegisterCommand>> = {
  export: async () => (await import('./commands/export.ts')).registerExport,
  agent: async () => (await import('./commands/agent.ts')).registerAgent,
  fetch: async () => (await import('./commands/fetch.ts')).registerFetch,
  sync: async () => (await import('./commands/sync.ts')).registerSync,
  mirror: async () => (await import('./commands/mirror.ts')).registerMirror,
  simulate: async () => (await import('./commands/simulate.ts')).registerSimulate,
  operator: async () => (await import('./commands/operator.ts')).registerOperator,
  trigger: async () => (await import('./commands/trigger.ts')).registerTrigger,
  status: async () => (await import('./commands/status.ts')).registerStatus,
  check: async () => (await import('./commands/check.ts')).registerCheck,
  completion: async () => (await import('./commands/completion.ts')).registerCompletion,
};

/**
 * Error handling and output shared by every (sub)command, including ones built elsewhere and added
 * with addCommand. With --json a usage error is a JSON line like any other error.
 */
function applyCommonSettings(command: Command, ctx: CliContext, json: boolean): void {
  command
    .showHelpAfterError(json ? false : '(add --help for usage)')
    .configureOutput({
      // commander quotes argv in its errors ("too many arguments", unknown options): links get scrubbed.
      writeOut: (text) => ctx.stdout.write(scrub(text)),
      writeErr: (text) => ctx.stderr.write(scrub(text)),
      outputError: (text, write) =>
        json ? new Reporter(ctx, true).error(text.trim().replace(/^error: /, ''), EXIT.usage) : write(text),
    })
    // Errors come back to `run` instead of exiting, so exit codes stay ours.
    .exitOverride();
  for (const sub of command.commands) applyCommonSettings(sub, ctx, json);
}

/**
 * Set by the single-executable build (scripts/release/executable.ts), which carries no package.json;
 * undeclared everywhere else.
 */
declare const STATIC_EXPORT_VERSION: string | undefined;

/** The version in the nearest package.json above this module (src/cli/, dist/cli/ or a bench build). */
function packageVersion(): string {
  if (typeof STATIC_EXPORT_VERSION === 'string') return STATIC_EXPORT_VERSION;
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dir.pathname === '/') throw error;
    }
  }
}

/** The program with the command `argv` names (after node and the script), or all of them. */
export async function buildProgram(ctx: CliContext, argv: string[] = []): Promise<Command> {
  const program = new Command('static-export')
    .version(packageVersion(), '-V, --version', 'print the version of static-export')
    .description(
      'Keep self-hosted docs sites serving the latest static export of the hosted docs platform: export, ' +
        'fetch and mirror bundles, manage agent jobs, and run a local admin API simulator.',
    )
    .addHelpText('after', EXIT_CODES_HELP)
    // Each command's options are its own, after its name: `mirror push --url` is push's --url, not mirror's.
    .enablePositionalOptions();
  const named = argv[2];
  // `--version` needs no command; `completion` and `--help` describe every command, so they load all.
  const names =
    named === '--version' || named === '-V'
      ? []
      : named !== undefined && named !== 'completion' && Object.hasOwn(COMMANDS, named)
        ? [named]
        : Object.keys(COMMANDS);
  for (const name of names) (await (COMMANDS[name] as () => Promise<RegisterCommand>)())(program, ctx);
  applyCommonSettings(program, ctx, argv.includes('--json'));
  return program;
}

/** Runs the CLI and returns the exit code (see exit-codes.ts). */
export async function run(argv: string[], ctx: CliContext = processContext()): Promise<number> {
  try {
    await (await buildProgram(ctx, argv)).parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander already printed the message naming the flag; help and version are not failures.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const code = exitCodeFor(error);
    const message = error instanceof Error ? error.message : String(error);
    new Reporter(ctx, argv.includes('--json')).error(message, code);
    // A bug's stack helps its report; a CliError's message already says all (exit 1 for an answer
    // the CLI cannot understand included).
    if (code === EXIT.unexpected && error instanceof Error && !(error instanceof CliError) && error.stack) {
      // The stack's lines are its own; the message in its first line may quote an answer.
      ctx.stderr.write(`${scrub(error.stack).split('\n').map(terminalSafe).join('\n')}\n`);
    }
    return code;
  }
}

/** The process's CLI: the exit code of `run` over its arguments. */
export function main(): Promise<void> {
  // A closed pipe (`static-export --help | head`) ends the command quietly, as for any Unix tool.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
  }
  return run(process.argv).then((code) => {
    process.exitCode = code;
  });
}

// No top-level await: the single executable bundles this module as CommonJS.
if (import.meta.main) void main();
