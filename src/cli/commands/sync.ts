import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Logger } from '../../log.ts';
import type { KubeObject } from '../../runtime/informer.ts';
import { isNotFound, KubeApiError, type KubeClient, resourcePath } from '../../runtime/kube-client.ts';
import type { VersionStore } from '../../sync/store.ts';
import type { SecretState, Syncer } from '../../sync/syncer.ts';
import { CHART_KEYS } from '../../targets/chart-keys.ts';
import type { CliContext } from '../context.ts';
import { untilStopSignal } from '../context.ts';
import { CliError, EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import { cliKubeClient, type KubeFlags, kubeFailure, kubeOptions } from '../kube.ts';
import { cliLogger, ENV, flagOrEnv, integer, nonEmpty } from '../options.ts';
import { Reporter } from '../output.ts';
import { REGISTRY_ENV, REGISTRY_ENV_HELP } from '../registry-options.ts';
import { fetchSite, type SiteCheckFlags, siteCheckOptions, verifyKeyOption } from '../site-fetch.ts';

interface SyncFlags extends SiteCheckFlags, KubeFlags {
  root: string;
  secret: string;
  namespace?: string;
  pod?: string;
  keep: number;
  once?: boolean;
  bundleUrlKey: string;
  versionKey: string;
  ociReferenceKey: string;
}

/** The namespace of the Secret (and of the pod): --namespace, the downward API's, or the service account's. */
function namespaceOf(flags: SyncFlags, kube: KubeClient, ctx: CliContext): string {
  const namespace = flagOrEnv(flags.namespace, ENV.podNamespace, ctx) ?? kube.namespace;
  if (namespace === undefined) {
    throw usageError(
      `--namespace is required: no ${ENV.podNamespace} variable and no namespace in the kubeconfig or service account.`,
    );
  }
  return namespace;
}

/** Why the Secret cannot be read, naming it and what fixes it. */
function secretReadFailure(error: unknown, ref: string, kube: KubeClient): CliError {
  if (isNotFound(error)) {
    return new CliError(
      EXIT.notReady,
      `${ref} does not exist: the operator writes it when it first publishes (check --secret and --namespace).`,
    );
  }
  if (error instanceof KubeApiError && error.status === 403) {
    return new CliError(
      EXIT.auth,
      `not allowed to read ${ref} (403): give the pod's service account a Role with get, list and watch on secrets, resourceNames [${ref.split('/')[1]}].`,
    );
  }
  return kubeFailure(error, `get ${ref}`, kube.server);
}

interface SyncSetup {
  kube: KubeClient;
  namespace: string;
  ref: string;
  store: VersionStore;
  syncer: Syncer;
  stateOf: (object: unknown) => SecretState;
  out: Reporter;
  logger: Logger;
}

/** --once: one sync to the Secret's version; a refusal exits with fetch's code. */
async function syncOnce(flags: SyncFlags, s: SyncSetup): Promise<void> {
  const secret = await s.kube
    .get(resourcePath('v1', 'secrets', s.namespace, flags.secret))
    .catch((error: unknown) => {
      throw secretReadFailure(error, s.ref, s.kube);
    });
  const state = s.stateOf(secret);
  if ('problem' in state) throw new CliError(EXIT.notReady, state.problem);
  const served = await s.store.served();
  try {
    await s.syncer.syncTo(state.wanted, new AbortController().signal);
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    await s.syncer.report({ kind: 'fetchFailed', served, version: state.wanted.version, cause });
    throw error;
  }
  await s.syncer.report({ kind: 'serving', version: state.wanted.version });
  s.out.info(`serving ${state.wanted.version} from ${s.store.current}`);
}

/** The sidecar: a list-watch of the one Secret (a Role with resourceNames [NAME] allows it) until SIGTERM. */
async function syncContinuously(flags: SyncFlags, s: SyncSetup): Promise<void> {
  const { Informer } = await import('../../runtime/informer.ts');
  const informer = new Informer<KubeObject>({
    client: s.kube,
    apiVersion: 'v1',
    plural: 'secrets',
    namespaces: [s.namespace],
    fieldSelector: `metadata.name=${flags.secret}`,
    logger: s.logger,
    resyncMs: 0,
  });
  informer.onChange((type, object) =>
    s.syncer.want(
      type === 'DELETED'
        ? { problem: `${s.ref} was deleted: keeping the served version until it is back.` }
        : s.stateOf(object),
    ),
  );
  const stop = new AbortController();
  // Stopping the informer also ends a wait for a first list that never succeeds (no permission yet).
  const stopped = untilStopSignal().then(() => {
    stop.abort();
    return informer.stop();
  });
  informer.start();
  const running = s.syncer.run(stop.signal);
  await informer.waitForSync();
  if (!stop.signal.aborted && informer.get(s.namespace, flags.secret) === undefined) {
    s.syncer.want({
      problem: `${s.ref} does not exist (yet): waiting for it (the operator writes it when it first publishes; check --secret and --namespace).`,
    });
  }
  await Promise.all([running, stopped]);
}

async function runSync(flags: SyncFlags, ctx: CliContext): Promise<void> {
  if (flags.passwordStdin && !flags.once) {
    // stdin is read once: every later pull of the sidecar would go without the password.
    throw usageError(
      `--password-stdin works with --once only: give the sidecar the registry password in ${REGISTRY_ENV.password} or an --authfile.`,
    );
  }
  const { SecretSchema, wantedContent } = await import('../../sync/secret.ts');
  const { VersionStore } = await import('../../sync/store.ts');
  const { Syncer } = await import('../../sync/syncer.ts');
  const { PodConditionReporter } = await import('../../sync/reporter.ts');
  const out = new Reporter(ctx, false);
  const logger = cliLogger(ctx);
  const kube = await cliKubeClient(flags, ctx);
  try {
    const namespace = namespaceOf(flags, kube, ctx);
    const ref = `Secret ${namespace}/${flags.secret}`;
    const keys = {
      bundleUrl: flags.bundleUrlKey,
      version: flags.versionKey,
      ociReference: flags.ociReferenceKey,
    };
    const stateOf = (object: unknown): SecretState => {
      const secret = SecretSchema.safeParse(object);
      return secret.success
        ? wantedContent(secret.data, keys)
        : { problem: `${ref} has an unexpected shape: ${secret.error.message}` };
    };
    const store = new VersionStore(resolve(flags.root));
    await store.prepare();
    const pod = flagOrEnv(flags.pod, ENV.podName, ctx);
    const syncer = new Syncer({
      store,
      keep: flags.keep,
      fetch: async (wanted, dest, signal) => {
        await fetchSite(
          { source: wanted.source, dest, served: store.current, expectVersion: wanted.version, signal },
          flags,
          ctx,
        );
      },
      ...(pod ? { reporter: new PodConditionReporter(kube, namespace, pod, logger) } : {}),
      log: (line) => out.info(line),
    });
    const setup = { kube, namespace, ref, store, syncer, stateOf, out, logger };
    await (flags.once ? syncOnce(flags, setup) : syncContinuously(flags, setup));
  } finally {
    await kube.close();
  }
}

export function registerSync(program: Command, ctx: CliContext): void {
  const command = program
    .command('sync')
    .summary("serve the values Secret's content version, swapped in atomically (the site's sync sidecar)")
    .description(
      "Watch the site's values Secret through the Kubernetes API and serve the version it names from " +
        '--root/current, a symlink to --root/versions/<version>. A new version is fetched beside the served ' +
        'one with every check of `fetch` (caps, site check, publish gate, version match), then the symlink is ' +
        'swapped atomically: the web server (root --root/current) never sees a partial tree. A version still ' +
        'kept on disk (a rollback) is swapped in at once. A failed fetch keeps the served version, is reported ' +
        `and retried with backoff; a newer Secret value supersedes it. With --pod (or ${ENV.podName}) the pod ` +
        'condition staticexport.dev/ContentServed says which version is served and why a fetch failed. The ' +
        'service account needs get, list and watch on the Secret, and patch on pods/status for the condition.',
    )
    .requiredOption(
      '--root <dir>',
      'directory holding versions/ and the current symlink (nginx root: <dir>/current)',
    )
    .requiredOption('--secret <name>', 'the values Secret naming the version and where to fetch it', nonEmpty)
    .option(
      '--namespace <namespace>',
      `the Secret's and pod's namespace (default: ${ENV.podNamespace}, else the service account's)`,
    )
    .option(
      '--pod <name>',
      `report the served version on this pod (default: ${ENV.podName}; no report without either)`,
    )
    .option(
      '--keep <n>',
      'versions kept on disk for instant rollback, the served one included',
      integer(1),
      3,
    )
    .option('--once', "sync to the Secret's version once and exit (the init container)")
    .option('--bundle-url-key <key>', 'Secret key of the bundle link', nonEmpty, CHART_KEYS.bundleUrl)
    .option('--version-key <key>', 'Secret key of the content version', nonEmpty, CHART_KEYS.version)
    .option(
      '--oci-reference-key <key>',
      'Secret key of the site image reference (wins over the link)',
      nonEmpty,
      CHART_KEYS.ociReference,
    );
  verifyKeyOption(kubeOptions(command));
  siteCheckOptions(command, ctx, '--root/current')
    .addHelpText(
      'after',
      `
Environment:
  ${ENV.podNamespace}, ${ENV.podName}  the pod's namespace and name (downward API), for --namespace and --pod
  STATIC_EXPORT_LOG_LEVEL  diagnostic log level on stderr: trace, debug, info, warn (default), error${REGISTRY_ENV_HELP}
${EXIT_CODES_HELP}`,
    )
    .action((flags: SyncFlags) => runSync(flags, ctx));
}
