import type { Command } from 'commander';
import type { AgentJob } from '../../api/index.ts';
import type { CliContext } from '../context.ts';
import { CliError, EXIT, EXIT_CODES_HELP } from '../exit-codes.ts';
import {
  API_ENV_HELP,
  type ApiFlags,
  apiClient,
  apiOptions,
  cliLogger,
  nonEmpty,
  pollIntervalOption,
  waitTimeoutOption,
} from '../options.ts';
import { formatElapsed, Reporter } from '../output.ts';
import { fixedDelay, pollUntil } from '../poll.ts';

interface CommonFlags extends ApiFlags {
  project: string;
  json?: boolean;
}

interface CreateFlags extends CommonFlags {
  prompt: string;
  wait?: boolean;
  pollInterval: number;
  timeout: number;
}

/** The job is the command's result: stdout (a JSON line with --json). */
function report(out: Reporter, job: AgentJob): void {
  if (out.mode === 'json') {
    out.event('job', { job });
    return;
  }
  const lines = [`Agent job ${job.id}: ${job.status}`];
  if (job.prLink) lines.push(`Pull request: ${job.prLink}`);
  else if (job.status === 'completed') lines.push('No pull request: the agent changed no file.');
  out.resultLines(lines);
}

async function runCreate(flags: CreateFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const client = await apiClient(flags, ctx, cliLogger(ctx));
  try {
    const { isAgentJobFinished } = await import('../../api/index.ts');
    let job = await client.createAgentJob(flags.project, flags.prompt);
    if (flags.wait) {
      job = await pollUntil(() => client.getAgentJob(flags.project, job.id), isAgentJobFinished, {
        delayMs: fixedDelay(flags.pollInterval),
        timeoutMs: flags.timeout,
        what: `agent job ${job.id}`,
        onUpdate: (current, elapsedMs) =>
          out.progress({
            key: current.status,
            text: `agent job ${current.id}: ${current.status}, ${formatElapsed(elapsedMs)}`,
          }),
      });
    }
    report(out, job);
    if (job.status === 'failed') throw new CliError(EXIT.jobFailed, `agent job ${job.id} failed.`);
  } finally {
    await client.close();
  }
}

async function runGet(id: string, flags: CommonFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const client = await apiClient(flags, ctx, cliLogger(ctx));
  try {
    report(out, await client.getAgentJob(flags.project, id));
  } finally {
    await client.close();
  }
}

export function registerAgent(program: Command, ctx: CliContext): void {
  const agent = program
    .command('agent')
    .summary('create and inspect agent jobs (docs edits that open a pull request)')
    .addHelpText('after', EXIT_CODES_HELP);

  apiOptions(
    agent
      .command('create')
      .description(
        'Create an agent job from a prompt. The agent edits the docs in the background and opens a pull ' +
          'request. Limited to 100 per hour per project. With --wait, polls until the job is completed, ' +
          'archived or failed (exit 4 when failed).',
      )
      .requiredOption('--project <id>', 'project id (API keys page of the dashboard)', nonEmpty)
      .requiredOption('--prompt <text>', 'what the agent must do', nonEmpty),
  )
    .option('--wait', 'wait until the job finishes and print its pull request link')
    .addOption(pollIntervalOption(ctx, 'time between status polls with --wait'))
    .addOption(waitTimeoutOption(ctx, 'with --wait: give up waiting for the job after this long'))
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText('after', `${API_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: CreateFlags) => runCreate(flags, ctx));

  apiOptions(
    agent
      .command('get')
      .description('Show an agent job: status and pull request link.')
      .argument('<id>', 'agent job id')
      .requiredOption('--project <id>', 'project id the job belongs to', nonEmpty),
  )
    .option('--json', 'JSON lines on stdout instead of human output')
    .addHelpText('after', `${API_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((id: string, flags: CommonFlags) => runGet(id, flags, ctx));
}
