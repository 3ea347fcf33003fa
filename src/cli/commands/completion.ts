import { type Command, InvalidArgumentError } from 'commander';
import { bashScript, commandTree, fishScript, zshScript } from '../completion-scripts.ts';
import type { CliContext } from '../context.ts';

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;
type Shell = keyof typeof SHELLS;

function shell(value: string): Shell {
  if (!Object.hasOwn(SHELLS, value)) throw new InvalidArgumentError('expected bash, zsh or fish.');
  return value as Shell;
}

export function registerCompletion(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .summary('print a shell completion script (bash, zsh or fish)')
    .description(
      'Print a completion script for commands, subcommands, flags and flag values, generated from this ' +
        'version of static-export. bash: source <(static-export completion bash) (in ~/.bashrc); zsh: ' +
        'source <(static-export completion zsh) (in ~/.zshrc; it uses bashcompinit); fish: static-export ' +
        'completion fish > ~/.config/fish/completions/static-export.fish.',
    )
    .argument('<shell>', 'bash, zsh or fish', shell)
    .action((name: Shell) => {
      ctx.stdout.write(SHELLS[name](commandTree(program)));
    });
}
