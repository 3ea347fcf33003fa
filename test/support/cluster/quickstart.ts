// The quickstart's commands, as docs/quickstart.md shows them: the operator, the simulator (for
// trying only) and the site chart installed with Helm, one StaticExportRelease applied, the site's
// Service port-forwarded. A unit test checks the page shows each command verbatim; the node test
// runs the page's own shell blocks (pageShell) as a user pastes them.

import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { HELM, KUBECTL, kubeconfig, ROOT, type RunResult, run } from './kube.ts';

/** Where the site, the simulator and the release live, and where the operator runs. */
export const QUICKSTART_NS = 'docs';
export const OPERATOR_NS = 'static-export-system';
export const SIMULATOR_URL = `http://static-export-simulator.${QUICKSTART_NS}.svc`;
/** The port the page tells users to forward the site to. */
export const FORWARD_PORT = 8080;

/** One command: the program and its arguments, and what it reads on stdin. */
export interface QuickstartCommand {
  argv: string[];
  stdin?: string;
}

export const RELEASE_MANIFEST = `apiVersion: staticexport.dev/v1alpha1
kind: StaticExportRelease
metadata:
  name: docs
  namespace: ${QUICKSTART_NS}
spec:
  projectId: docs
  apiBaseUrl: ${SIMULATOR_URL}
  credentialsSecretRef:
    name: static-export-simulator
    key: adminKey
  target:
    valuesSecret:
      name: docs-site-values
`;

export const INSTALL_OPERATOR: QuickstartCommand = {
  argv: [
    'helm',
    'install',
    'static-export-operator',
    'charts/static-export-operator',
    '--namespace',
    OPERATOR_NS,
    '--create-namespace',
    '--set',
    `operator.allowedApiBaseUrls={${SIMULATOR_URL}}`,
    '--set',
    'operator.allowInsecureApiBaseUrl=true',
    '--wait',
  ],
};

export const INSTALL_SIMULATOR: QuickstartCommand = {
  argv: [
    'helm',
    'install',
    'static-export-simulator',
    'charts/static-export-simulator',
    '--namespace',
    QUICKSTART_NS,
    '--create-namespace',
    '--wait',
  ],
};

export const TEST_SIMULATOR: QuickstartCommand = {
  argv: ['helm', 'test', 'static-export-simulator', '--namespace', QUICKSTART_NS],
};

export const APPLY_RELEASE: QuickstartCommand = {
  argv: ['kubectl', 'apply', '-f', '-'],
  stdin: RELEASE_MANIFEST,
};

export const WAIT_READY: QuickstartCommand = {
  argv: [
    'kubectl',
    'wait',
    '--namespace',
    QUICKSTART_NS,
    'staticexportrelease/docs',
    '--for=condition=Ready',
    '--timeout=5m',
  ],
};

export const INSTALL_SITE: QuickstartCommand = {
  argv: [
    'helm',
    'install',
    'docs',
    'charts/static-export-site',
    '--namespace',
    QUICKSTART_NS,
    '--set',
    'staticExport.enabled=true',
    '--set',
    'staticExport.existingSecret=docs-site-values',
    '--wait',
  ],
};

export const PORT_FORWARD: QuickstartCommand = {
  argv: [
    'kubectl',
    'port-forward',
    '--namespace',
    QUICKSTART_NS,
    'service/docs-static-export-site',
    `${FORWARD_PORT}:80`,
  ],
};

/** In the order the page gives them. */
export const QUICKSTART: QuickstartCommand[] = [
  INSTALL_OPERATOR,
  INSTALL_SIMULATOR,
  TEST_SIMULATOR,
  APPLY_RELEASE,
  WAIT_READY,
  INSTALL_SITE,
  PORT_FORWARD,
];

/** An argument as a POSIX shell needs it written: quoted when it holds anything but plain characters. */
export function shellWord(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The command line as the page writes it (a manifest on stdin as a here-document). */
export function shellLine(command: QuickstartCommand): string {
  const line = command.argv.map(shellWord).join(' ');
  return command.stdin === undefined ? line : `${line} <<'EOF'\n${command.stdin}EOF`;
}

const BINARIES: Record<string, string> = { helm: HELM, kubectl: KUBECTL };
// Helm keeps its cache and config under HOME: one of the run's own, not the developer's.
let home: string | undefined;

/**
 * Runs `command` at the repository's root against the suite's cluster (KUBECONFIG, as a user's
 * shell has it), with `extra` arguments after the page's own (a test's values file).
 */
export function runStep(command: QuickstartCommand, extra: string[] = []): Promise<RunResult> {
  const [program = '', ...args] = command.argv;
  home ??= mkdtempSync(join(tmpdir(), 'quickstart-home-'));
  return run(
    'sh',
    ['-c', 'cd "$0" && exec "$@"', ROOT, BINARIES[program] ?? program, ...args, ...extra],
    command.stdin,
    {
      KUBECONFIG: kubeconfig(),
      HOME: home,
    },
  );
}

/** A markdown page's ```sh blocks, in order, as written. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

/**
 * A shell for a page's blocks against the suite's cluster, at the repository's root: `kubectl` and
 * `helm` are the repository's, `static-export` runs the CLI from the sources, and each `helm install charts/NAME` gets one values file more than
 * the page shows, `values[NAME]` (what a test cluster needs beside the page: the node's taint).
 */
export function pageShell(
  values: Record<string, object>,
): (block: string, input?: string) => Promise<RunResult> {
  const bin = mkdtempSync(join(tmpdir(), 'quickstart-bin-'));
  symlinkSync(KUBECTL, join(bin, 'kubectl'));
  // The CLI as installed (docs/cli.md), here from the sources on the repository's Node 24.
  writeFileSync(
    join(bin, 'static-export'),
    `#!/bin/sh\nexec "${join(ROOT, 'node_modules/node/bin/node')}" "${join(ROOT, 'src/cli/main.ts')}" "$@"\n`,
  );
  chmodSync(join(bin, 'static-export'), 0o755);
  for (const [chart, v] of Object.entries(values)) writeFileSync(join(bin, `${chart}.yaml`), stringify(v));
  writeFileSync(
    join(bin, 'helm'),
    `#!/bin/sh
if [ "$1" = install ]; then
  for a in "$@"; do case "$a" in charts/*) [ ! -f "${bin}/\${a#charts/}.yaml" ] || set -- "$@" -f "${bin}/\${a#charts/}.yaml"; break;; esac; done
fi
exec "${HELM}" "$@"
`,
  );
  chmodSync(join(bin, 'helm'), 0o755);
  home ??= mkdtempSync(join(tmpdir(), 'quickstart-home-'));
  const env = { KUBECONFIG: kubeconfig(), HOME: home, PATH: `${bin}:${process.env.PATH ?? ''}` };
  // -e: a block stops at its first failing command, as the page's reader would. `input` is what
  // the reader types or pastes (a key a block reads from standard input).
  return (block, input) => run('sh', ['-ec', `cd "$0"\n${block}`, ROOT], input, env);
}

/** The page's port-forward on a free local port; resolves once it forwards, with its base URL. */
export async function portForward(): Promise<{ baseUrl: string; child: ChildProcess }> {
  const [, ...args] = PORT_FORWARD.argv;
  const child = spawn(
    KUBECTL,
    args.map((a) => (a === `${FORWARD_PORT}:80` ? ':80' : a)),
    {
      env: { ...process.env, KUBECONFIG: kubeconfig() },
    },
  );
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(String(d));
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}`)));
  });
  return { baseUrl: `http://127.0.0.1:${port}`, child };
}
