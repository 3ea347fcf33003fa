import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { cliKubeClient, type KubeFlags, kubeOptions } from '../kube.ts';
import { Reporter } from '../output.ts';
import { getRelease, listReleases } from '../release-reader.ts';
import { type ReleaseRef, releaseRef } from '../release-ref.ts';
import { formatTable, summarize } from '../release-summary.ts';

interface StatusFlags extends KubeFlags {
  namespace?: string;
  allNamespaces?: boolean;
  json?: boolean;
}

async function runStatus(ref: ReleaseRef | undefined, flags: StatusFlags, ctx: CliContext): Promise<void> {
  if (ref && (flags.namespace || flags.allNamespaces))
    throw usageError('give either <namespace>/<name> or --namespace/--all-namespaces, not both.');
  const out = new Reporter(ctx, flags.json === true);
  const kube = await cliKubeClient(flags, ctx);
  try {
    const namespace = flags.allNamespaces ? undefined : (flags.namespace ?? kube.namespace ?? 'default');
    const releases = ref ? [await getRelease(kube, ref)] : await listReleases(kube, namespace);
    const rows = releases.map(summarize);
    if (out.mode === 'json') {
      for (const row of rows) out.event('release', { ...row });
      return;
    }
    if (rows.length === 0) {
      out.info(`No StaticExportReleases ${namespace ? `in namespace ${namespace}` : 'in any namespace'}.`);
      return;
    }
    out.result(formatTable(rows, new Date()));
  } finally {
    await kube.close();
  }
}

export function registerStatus(program: Command, ctx: CliContext): void {
  kubeOptions(
    program
      .command('status')
      .summary("releases' Ready condition, served version, link expiry and rollout, from the cluster")
      .description(
        'Read StaticExportReleases through the Kubernetes API and show, per release: Ready (True, False, ' +
          'Unknown before the operator first reported), its reason and message, the version served, when it ' +
          'was last published, when its bundle link expires and is renewed, and the state of the last rollout. ' +
          "Without <namespace>/<name>: every release of --namespace (default: the kubeconfig context's, else " +
          '"default"), or of all namespaces ' +
          'with --all-namespaces. Exit 0 whatever the releases say; 2 for an unknown release or no kubeconfig, ' +
          '3 when the cluster refuses the credentials, 6 when it is unreachable, 7 when the CRDs are not installed, ' +
          '1 when its answer is refused (over 64 MiB, or a list that never ends).',
      )
      .argument('[namespace/name]', 'one StaticExportRelease, e.g. docs/docs', releaseRef)
      .option(
        '-n, --namespace <namespace>',
        "the releases of this namespace (default: the kubeconfig context's)",
      )
      .option('-A, --all-namespaces', 'the releases of every namespace')
      .option('--json', 'one JSON line per release on stdout instead of a table'),
  )
    .addHelpText('after', EXIT_CODES_HELP)
    .action((ref: ReleaseRef | undefined, flags: StatusFlags) => runStatus(ref, flags, ctx));
}
