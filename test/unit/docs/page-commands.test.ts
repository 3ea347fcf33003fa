// The commands and names the operational pages (troubleshooting, security, production) tell a
// platform team to use, against the code and the charts: each `static-export` command and flag
// exists, `kubectl -c` names a container the charts run, a jsonpath into a StaticExportRelease names
// a field of its CRD, an events field selector an event reason the operator records, `helm --set`
// and every values path a chart value, every metric a metric the operator registers and every
// alert one of the chart's.
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRD_DEFINITIONS } from '../../../src/crd/manifests.ts';
import { EVENT_REASONS } from '../../../src/crd/reasons.ts';
import { toStructuralSchema } from '../../../src/crd/structural.ts';
import {
  chartAlerts,
  chartContainers,
  chartValues,
  cliProgram,
  hasValue,
  registeredMetricNames,
  type Schema,
  schemaFields,
} from '../../support/fixtures/doc-facts.ts';
import { codeSpans, proseLines, readRepoFile, shellCommands } from '../../support/fixtures/markdown.ts';

const PAGES = ['docs/troubleshooting.md', 'docs/security.md', 'docs/production.md'];

/** Flags of kubectl and helm that the pages write on their own (`--force-conflicts`). */
const TOOL_FLAGS = [
  '--force-conflicts',
  '--reset-then-reuse-values',
  '--reuse-values',
  '--set',
  '--create-namespace',
  '--namespace',
];

interface Facts {
  program: Command;
  containers: string[];
  releaseFields: Set<string>;
  values: Record<string, unknown>;
  metrics: string[];
  alerts: string[];
  kinds: string[];
}

const SER = CRD_DEFINITIONS.find((d) => d.kind === 'StaticExportRelease');
const SER_NAMES = SER ? [SER.plural, SER.singular, ...SER.shortNames] : [];

let facts: Facts;

beforeAll(async () => {
  if (!SER) throw new Error('no StaticExportRelease CRD');
  facts = {
    program: await cliProgram(),
    containers: chartContainers(),
    releaseFields: new Set([
      ...schemaFields(toStructuralSchema(SER.spec) as Schema, 'spec').keys(),
      ...schemaFields(toStructuralSchema(SER.status) as Schema, 'status').keys(),
    ]),
    values: Object.fromEntries(
      ['static-export-operator', 'static-export-site'].map((c) => [c, chartValues(c)]),
    ),
    metrics: registeredMetricNames(),
    alerts: chartAlerts(),
    kinds: CRD_DEFINITIONS.map((d) => d.kind),
  };
});

/** A command's words, quoted ones kept whole. */
const words = (cmd: string) => cmd.match(/'[^']*'|"[^"]*"|\S+/g) ?? [];

/** Every long flag of every command of the CLI. */
function allFlags(command: Command): string[] {
  return [...command.options.flatMap((o) => (o.long ? [o.long] : [])), ...command.commands.flatMap(allFlags)];
}

/** What is wrong with a `static-export …` command: an unknown command or a flag it does not take. */
function cliProblems(cmd: string, program: Command): string[] {
  const [first, ...rest] = words(cmd);
  if (first !== 'static-export') return [];
  let command = program;
  const path = ['static-export'];
  let positional = false;
  const problems: string[] = [];
  for (const word of rest) {
    if (/^[|;&]/.test(word)) break;
    if (word.startsWith('-')) {
      const flag = word.split('=')[0] ?? '';
      const known = [...command.options, ...program.options].some((o) => o.long === flag || o.short === flag);
      if (!known && flag !== '--help') problems.push(`${path.join(' ')} has no flag ${flag}`);
      continue;
    }
    if (positional) continue;
    const subcommands = command.commands.filter((c) => c.name() !== 'help');
    const sub = subcommands.find((c) => c.name() === word);
    if (sub) {
      command = sub;
      path.push(word);
    } else if (subcommands.length > 0) {
      problems.push(`${path.join(' ')} has no command ${word}`);
      break;
    } else positional = true;
  }
  return problems;
}

/** The fields a jsonpath names from a StaticExportRelease's root (spec…, status…), items as `[]`. */
function jsonpathFields(jsonpath: string): string[] {
  // Inside {range X}…{end} paths are relative to X's items: only X names a field of the release.
  const absolute = jsonpath.replace(/\{range ([^}]*)\}.*?\{end\}/g, '{$1}');
  return [...absolute.matchAll(/(?<![\w\]])\.((?:spec|status)(?:\.[A-Za-z]+|\[[^\]]*\])*)/g)].map((m) =>
    (m[1] ?? '').replace(/\[[^\]]*\]/g, '[]').replace(/\[\]$/, ''),
  );
}

/** What is wrong with a kubectl command: a container, a release field or an event reason that does not exist. */
function kubectlProblems(cmd: string, f: Facts): string[] {
  if (!/^kubectl\b/.test(cmd)) return [];
  const problems: string[] = [];
  const w = words(cmd);
  w.forEach((word, i) => {
    const next = w[i + 1] ?? '';
    if ((word === '-c' || word === '--container') && !f.containers.includes(next))
      problems.push(`no chart runs a container ${next}`);
    if (word === '--field-selector')
      for (const term of next.split(',')) {
        const reason = /^reason=(\w+)$/.exec(term)?.[1];
        if (reason && !(EVENT_REASONS as readonly string[]).includes(reason))
          problems.push(`the operator records no event ${reason}`);
      }
  });
  const resource = /\bget ([\w,.-]+)/.exec(cmd)?.[1]?.split(',') ?? [];
  const jsonpath = /-o jsonpath='([^']*)'/.exec(cmd)?.[1];
  if (jsonpath && resource.some((r) => SER_NAMES.includes(r)))
    for (const field of jsonpathFields(jsonpath))
      if (!f.releaseFields.has(field)) problems.push(`a StaticExportRelease has no field ${field}`);
  return problems;
}

/** What is wrong with a `helm install|upgrade … charts/<chart> … --set k=v`: values the chart does not have. */
function helmProblems(cmd: string, f: Facts): string[] {
  const chart = /^helm (?:upgrade|install)\b.*\bcharts\/([\w-]+)/.exec(cmd)?.[1];
  if (!chart) return [];
  return [...cmd.matchAll(/--set ([\w.-]+)=/g)]
    .map((m) => m[1] ?? '')
    .filter((path) => !hasValue(f.values[chart], path))
    .map((path) => `charts/${chart} has no value ${path}`);
}

/** What is wrong with a code span of prose: a metric, alert, flag, values path or command that does not exist. */
function spanProblems(span: string, f: Facts): string[] {
  const metric = /^(static_export_[a-z_]+)(?:\{[^}]*\})?$/.exec(span)?.[1];
  if (metric) return f.metrics.includes(metric) ? [] : [`the operator registers no metric ${metric}`];
  if (/^StaticExport[A-Z]\w+$/.test(span) && !f.kinds.includes(span))
    return f.alerts.includes(span) ? [] : [`the operator chart has no alert ${span}`];
  if (/^--[a-z][\w-]*(?:=\S*)?$/.test(span)) {
    const flag = span.split('=')[0] ?? '';
    return [...allFlags(f.program), ...TOOL_FLAGS].includes(flag) ? [] : [`no command takes ${flag}`];
  }
  // A values path alone, or as `--set path=value`.
  const path = /^(?:--set )?([a-z][A-Za-z]*(?:\.[a-z][A-Za-z0-9]*)+)(?:=\S*)?$/.exec(span)?.[1];
  // A chart value starts with a chart's top-level key (spec.…, status.… and file names do not).
  const charts = Object.entries(f.values).filter(
    ([, v]) =>
      path &&
      !/\.(?:conf|ya?ml|json|html?|md|ts|js|txt|gz|tgz)$/.test(path) &&
      hasValue(v, path.split('.')[0] ?? ''),
  );
  if (path && charts.length > 0)
    return charts.some(([, v]) => hasValue(v, path)) ? [] : [`no chart has the value ${path}`];
  return [...cliProblems(span, f.program), ...kubectlProblems(span, f), ...helmProblems(span, f)];
}

/** Every problem of a page: its shell commands, then the code spans of its prose, with line numbers. */
function pageProblems(text: string, f: Facts): string[] {
  const commands = shellCommands(text).flatMap((cmd) =>
    [...cliProblems(cmd, f.program), ...kubectlProblems(cmd, f), ...helmProblems(cmd, f)].map(
      (why) => `${cmd}: ${why}`,
    ),
  );
  const spans = proseLines(text).flatMap(({ line, text: l }) =>
    codeSpans(l).flatMap((span) => spanProblems(span, f).map((why) => `${line}: \`${span}\`: ${why}`)),
  );
  return [...commands, ...spans];
}

describe('commands and names in the operational pages', () => {
  it.each(PAGES)('%s: each exists in the CLI, the CRD, the operator or the charts', (page) => {
    expect(pageProblems(readRepoFile(page), facts)).toEqual([]);
  });

  it('reports an unknown command, flag, container, field, event, value, metric and alert', () => {
    const page = [
      '```sh',
      'static-export status docs/docs --wide',
      'static-export frobnicate',
      'kubectl -n docs logs POD -c init',
      'kubectl -n docs get ser docs -o jsonpath=\'{.status.current.expiry} {.status.conditions[?(@.type=="Ready")].reason}\'',
      'kubectl get events --field-selector type=Warning,reason=LinkExpired',
      'helm upgrade op charts/static-export-operator --set operator.apiUrl=x --set watchNamespaces={a}',
      "kubectl get ser docs -o jsonpath='{range .status.conditions[*]}{.type}={.status}{end}'",
      'static-export mirror bogus --url x',
      '```',
      '',
      'Watch `static_export_release_ready` and `StaticExportLinkExpired` of `StaticExportRelease`;',
      'set `operator.apiBaseURL`, `siteVolumeSizeLimit`, `spec.interval`, `nginx.conf`, `--lease-nam`,',
      '`static-export check --no-rbac` and `static-export check --no-rbca`; `--set rbac.aggregate=false`.',
    ].join('\n');
    expect(pageProblems(page, facts)).toEqual([
      'static-export status docs/docs --wide: static-export status has no flag --wide',
      'static-export frobnicate: static-export has no command frobnicate',
      'kubectl -n docs logs POD -c init: no chart runs a container init',
      `kubectl -n docs get ser docs -o jsonpath='{.status.current.expiry} {.status.conditions[?(@.type=="Ready")].reason}': a StaticExportRelease has no field status.current.expiry`,
      'kubectl get events --field-selector type=Warning,reason=LinkExpired: the operator records no event LinkExpired',
      'helm upgrade op charts/static-export-operator --set operator.apiUrl=x --set watchNamespaces={a}: charts/static-export-operator has no value operator.apiUrl',
      'static-export mirror bogus --url x: static-export mirror has no command bogus',
      '12: `static_export_release_ready`: the operator registers no metric static_export_release_ready',
      '12: `StaticExportLinkExpired`: the operator chart has no alert StaticExportLinkExpired',
      '13: `operator.apiBaseURL`: no chart has the value operator.apiBaseURL',
      '13: `--lease-nam`: no command takes --lease-nam',
      '14: `static-export check --no-rbca`: static-export check has no flag --no-rbca',
      '14: `--set rbac.aggregate=false`: no chart has the value rbac.aggregate',
    ]);
  });
});
