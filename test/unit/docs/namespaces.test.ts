// The install paths a newcomer follows, command by command: whatever a command creates in a
// namespace (`kubectl -n docs create secret …`, `helm install … -n docs`) needs that namespace
// created earlier on the same path (`kubectl create namespace docs`, or `--create-namespace`).
import { describe, expect, it } from 'vitest';
import { readRepoFile, shellCommands } from '../../support/fixtures/markdown.ts';

/** Each path: a page, or the section of it under a heading (down to the next of its level or higher). */
const PATHS: { file: string; heading?: string }[] = [
  { file: 'README.md', heading: 'Quickstart: a served site in five minutes, on any cluster' },
  { file: 'README.md', heading: 'Install' },
  { file: 'docs/quickstart.md' },
  { file: 'docs/install.md', heading: 'The path a cluster user follows' },
  { file: 'charts/static-export-operator/README.md', heading: 'Install' },
];

function section(text: string, heading: string): string {
  const lines = text.split('\n');
  // Heading levels, 0 for any other line (a `# comment` inside a code block included).
  let fenced = false;
  const levels = lines.map((l) => {
    if (/^\s*```/.test(l)) fenced = !fenced;
    return fenced ? 0 : (/^(#+) /.exec(l)?.[1]?.length ?? 0);
  });
  const start = lines.findIndex((l, i) => levels[i] && l.replace(/^#+ /, '') === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = levels[start] ?? 1;
  const end = levels.findIndex((n, i) => i > start && n > 0 && n <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The commands that write into a namespace no earlier command of the path created. */
function uncreated(cmds: string[]): string[] {
  const created = new Set<string>();
  const found: string[] = [];
  for (const cmd of cmds) {
    const made = /\bkubectl (?:create namespace|create ns) ([\w-]+)/.exec(cmd)?.[1];
    if (made) created.add(made);
    const ns = /(?:^| )(?:-n|--namespace)[ =]([\w-]+)/.exec(cmd)?.[1];
    if (!ns) continue;
    const writes =
      /\bkubectl\b.* (?:create|apply|annotate|label|patch|run) /.test(`${cmd} `) ||
      /\bhelm (?:install|upgrade)\b/.test(cmd);
    if (/--create-namespace\b/.test(cmd)) created.add(ns);
    else if (writes && !created.has(ns)) found.push(`${cmd} (namespace ${ns} not created before)`);
  }
  return found;
}

describe('install paths', () => {
  it.each(PATHS)(
    '$file $heading: each namespace is created before anything goes in it',
    ({ file, heading }) => {
      const text = readRepoFile(file);
      const cmds = shellCommands(heading ? section(text, heading) : text);
      expect(cmds.length).toBeGreaterThan(0);
      expect(uncreated(cmds)).toEqual([]);
    },
  );

  it('reports a write into a namespace never created, not one created by kubectl or --create-namespace', () => {
    const text = [
      '```sh',
      'helm install op charts/op \\',
      '  --namespace system --create-namespace',
      'kubectl -n system get pods',
      'kubectl -n docs create secret generic key   # the key',
      'kubectl create namespace web',
      'kubectl -n web apply -f release.yaml',
      '```',
    ].join('\n');
    expect(uncreated(shellCommands(text))).toEqual([
      'kubectl -n docs create secret generic key (namespace docs not created before)',
    ]);
  });
});
