// `static-export completion`: scripts generated from the command definitions. The bash script is
// run by bash for what a user types; zsh (through bashcompinit) and fish are read for their content,
// as neither shell is on these machines. Every flag of every command is in each script.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../../scripts/run-process.ts';
import { buildProgram } from '../../../src/cli/main.ts';
import { tempDir } from '../../support/temp.ts';
import { runCli } from '../../support/tools/run-cli.ts';

const scripts: Record<string, string> = {};
let program: Command;

beforeAll(async () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell]);
    expect(r.code, r.stderr).toBe(0);
    scripts[shell] = r.stdout;
  }
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  program = await buildProgram({ stdout: sink, stderr: sink, env: {} });
});

/** What bash offers for `line` (the last word is the one being completed), from `cwd`. */
async function bashOffers(line: string, cwd = tempDir('completion-')): Promise<string[]> {
  const file = join(cwd, 'completion.bash');
  writeFileSync(file, scripts.bash ?? '');
  const words = line.split(' ');
  const r = await runProcess(
    'bash',
    [
      '-c',
      `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _static_export; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { cwd, env: { PATH: process.env.PATH ?? '' } },
  );
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean).sort();
}

function everyFlag(command: Command, path: string[] = []): { path: string[]; long: string }[] {
  return [
    ...command.options.filter((o) => o.long && !o.hidden).map((o) => ({ path, long: o.long as string })),
    ...command.commands.flatMap((c) => everyFlag(c, [...path, c.name()])),
  ];
}

describe('static-export completion bash', () => {
  it('completes commands, subcommands and flags of the command typed so far', async () => {
    expect(await bashOffers('static-export st')).toEqual(['status']);
    expect(await bashOffers('static-export mirror ')).toEqual(
      expect.arrayContaining(['push', 'save', 'load', 'sync', '--url']),
    );
    expect(await bashOffers('static-export mirror push --s')).toEqual(['--sign-key', '--site']);
    expect(await bashOffers('static-export trigger docs/docs --w')).toEqual(['--wait']);
  });

  it("completes a flag's choices, file names for path flags, and nothing for other values", async () => {
    expect(await bashOffers('static-export simulate --link-style ')).toEqual(['matrix', 'path', 'query']);
    const dir = tempDir('completion-cwd-');
    writeFileSync(join(dir, 'kubeconfig.yaml'), '');
    expect(await bashOffers('static-export status --kubeconfig kube', dir)).toEqual(['kubeconfig.yaml']);
    expect(await bashOffers('static-export export --domain ')).toEqual([]);
  });

  it('holds every flag of every command', () => {
    for (const { long } of everyFlag(program)) expect(scripts.bash).toContain(long);
  });
});

describe('static-export completion zsh and fish', () => {
  it('zsh: the bash completion through bashcompinit', () => {
    expect(scripts.zsh).toMatch(/^#compdef static-export\n/);
    expect(scripts.zsh).toContain('autoload -U +X bashcompinit && bashcompinit');
    expect(scripts.zsh).toContain('complete -o default -F _static_export static-export');
  });

  it('fish: each flag under its command, path flags completing files', () => {
    for (const { path, long } of everyFlag(program)) {
      const on = path.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${path[0]}`;
      expect(scripts.fish).toMatch(new RegExp(`-n '${on}[^']*' -l ${long.slice(2)}[ ']`));
    }
    expect(scripts.fish).toContain(
      "complete -c static-export -n '__fish_seen_subcommand_from mirror; and __fish_seen_subcommand_from push' -l sign-key -r -F",
    );
    expect(scripts.fish).toContain("-a status -d 'releases\\' Ready condition");
  });

  it('exits 2 for another shell', async () => {
    const r = await runCli(['completion', 'powershell']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "value 'powershell' is invalid for argument 'shell'. expected bash, zsh or fish.",
    );
  });
});
