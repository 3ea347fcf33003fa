import type { Command } from 'commander';
import { formatDuration } from '../../crd/duration.ts';
import { isForbidden, isNotFound, type KubeClient, resourcePath } from '../../runtime/kube-client.ts';
import type { LeaseSpec } from '../../runtime/leader-election.ts';
import { wait } from '../../timers.ts';
import { ADMIN_KEY_SKIPPED, probeAdminKey } from '../admin-api-check.ts';
import {
  type CheckResult,
  CRD_NAMES,
  type CrdObject,
  crdCheck,
  forbiddenCheck,
  operatorCheck,
  type PodObject,
} from '../cluster-checks.ts';
import type { CliContext } from '../context.ts';
import { CliError, EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.ts';
import {
  checkedBasePath,
  PROJECT_ENV_HELP,
  type ProjectFlags,
  projectIdFrom,
  projectOption,
} from '../export-target.ts';
import { cliKubeClient, type KubeFlags, kubeFailure, kubeOptions } from '../kube.ts';
import {
  API_ENV_HELP,
  type ApiFlags,
  apiClient,
  apiOptions,
  cliLogger,
  durationOption,
  ENV,
} from '../options.ts';
import { Reporter } from '../output.ts';
import {
  accessReview,
  callerNeeds,
  callerRbacCheck,
  OPERATOR_RBAC_SKIPPED,
  operatorNeeds,
  operatorRbacCheck,
  type Permission,
} from '../rbac-checks.ts';

interface CheckFlags extends KubeFlags, ApiFlags, ProjectFlags {
  basePath?: string;
  operatorNamespace: string;
  leaseName: string;
  operatorServiceAccount: string;
  namespace?: string;
  rbac: boolean;
  wait?: number;
  json?: boolean;
}

const RETRY_MS = 2000;
const REVIEWS = '/apis/authorization.k8s.io/v1';

/** A read RBAC refused: the check it served fails, naming it, and the others still run. */
class Forbidden {
  readonly what: string;
  constructor(what: string) {
    this.what = what;
  }
}

/** GET `path`, undefined when it is not found; other failures as the CLI reports them. */
async function getOrNone<T>(
  kube: KubeClient,
  path: string,
  what: string,
): Promise<T | undefined | Forbidden> {
  try {
    return await kube.get<T>(path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    if (isForbidden(error)) return new Forbidden(what);
    throw kubeFailure(error, what, kube.server);
  }
}

/** Whether the authorizer allows each of `needs` to the caller, or to `serviceAccount` when given. */
async function allowed(
  kube: KubeClient,
  needs: Permission[],
  serviceAccount?: { namespace: string; name: string },
): Promise<boolean[]> {
  const kind = serviceAccount ? 'subjectaccessreviews' : 'selfsubjectaccessreviews';
  try {
    return await Promise.all(
      needs.map(
        async (p) =>
          (
            await kube.create<{ status?: { allowed?: boolean } }>(
              `${REVIEWS}/${kind}`,
              accessReview(p, serviceAccount),
            )
          ).status?.allowed === true,
      ),
    );
  } catch (error) {
    throw kubeFailure(error, `create ${kind}.authorization.k8s.io`, kube.server);
  }
}

/** The caller's RBAC for status and trigger --wait, and the operator ServiceAccount's when the caller may ask. */
async function rbacChecks(kube: KubeClient, flags: CheckFlags): Promise<CheckResult[]> {
  const namespace = flags.namespace ?? kube.namespace ?? 'default';
  const mine = callerNeeds(namespace);
  const sa = { namespace: flags.operatorNamespace, name: flags.operatorServiceAccount };
  const [mineAllowed, [mayReview]] = await Promise.all([
    allowed(kube, mine),
    allowed(kube, [
      { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create', namespace: '' },
    ]),
  ]);
  const caller = callerRbacCheck(mine, mineAllowed);
  if (!mayReview) return [caller, OPERATOR_RBAC_SKIPPED(sa)];
  const theirs = operatorNeeds(namespace, flags.operatorNamespace);
  return [caller, operatorRbacCheck(sa, theirs, await allowed(kube, theirs, sa))];
}

async function runChecks(kube: KubeClient, flags: CheckFlags): Promise<CheckResult[]> {
  const crds = await Promise.all(
    CRD_NAMES.map(async (name) => {
      const crd = await getOrNone<CrdObject>(
        kube,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
        `get customresourcedefinitions.apiextensions.k8s.io ${name}`,
      );
      return crd instanceof Forbidden ? forbiddenCheck(`CRD ${name}`, crd.what) : crdCheck(name, crd);
    }),
  );
  const ns = flags.operatorNamespace;
  const lease = await getOrNone<{ spec: LeaseSpec }>(
    kube,
    resourcePath('coordination.k8s.io/v1', 'leases', ns, flags.leaseName),
    `get leases.coordination.k8s.io ${flags.leaseName} in ${ns}`,
  );
  let pods: PodObject[] | Forbidden = [];
  try {
    pods = (
      await kube.list<PodObject>(resourcePath('v1', 'pods', ns), {
        labelSelector: 'app.kubernetes.io/name=static-export-operator',
      })
    ).items;
  } catch (error) {
    if (isForbidden(error)) pods = new Forbidden(`list pods in ${ns}`);
    else if (!isNotFound(error)) throw kubeFailure(error, `list pods in ${ns}`, kube.server);
  }
  const operator =
    lease instanceof Forbidden || pods instanceof Forbidden
      ? forbiddenCheck(
          'operator',
          [lease, pods].flatMap((r) => (r instanceof Forbidden ? [r.what] : [])).join(', '),
        )
      : operatorCheck({
          namespace: ns,
          leaseName: flags.leaseName,
          lease: lease?.spec,
          pods,
          now: new Date(),
        });
  return [...crds, operator, ...(flags.rbac ? await rbacChecks(kube, flags) : [])];
}

/** The checks, again every RETRY_MS until all pass while --wait lasts. */
async function checkUntil(kube: KubeClient, flags: CheckFlags, out: Reporter): Promise<CheckResult[]> {
  const deadline = Date.now() + (flags.wait ?? 0);
  for (;;) {
    const last = Date.now() + RETRY_MS > deadline;
    let results: CheckResult[] | undefined;
    try {
      results = await runChecks(kube, flags);
    } catch (error) {
      // Waiting covers a cluster still coming up; credentials refused or RBAC missing do not heal.
      if (last || !(error instanceof CliError) || error.exitCode !== EXIT.unavailable) throw error;
    }
    if (results && (last || results.every((r) => r.ok))) return results;
    const failing = results?.filter((r) => !r.ok).map((r) => r.check) ?? ['the Kubernetes API'];
    out.info(`waiting for ${failing.join(', ')}...`);
    await wait(RETRY_MS);
  }
}

/**
 * What check can say of --base-path: no read of the API shows a deployment's base path, so only the
 * value is checked (before anything else); the platform applies it to each export started with it.
 */
async function basePathCheck(
  flags: CheckFlags,
  projectId: string | undefined,
): Promise<CheckResult | undefined> {
  if (flags.basePath === undefined) return undefined;
  if (projectId === undefined) {
    throw usageError(
      `--base-path goes with --project-id (or ${ENV.projectId}): a base path is a project's, in the current API revision.`,
    );
  }
  const basePath = checkedBasePath(flags.basePath);
  return {
    check: 'export base path',
    ok: true,
    message:
      `"${basePath}" is one the platform knows; it is sent with each export start of project ${projectId} and the ` +
      "exported links use it (no read of the API shows the deployment's own base path to compare it with)",
  };
}

const CLUSTER = 'Kubernetes cluster';

/**
 * The cluster's checks, or with an admin key to check, what kept them from running: no kubeconfig
 * skips them (the key alone is checked), an unreachable or refusing cluster fails them and its
 * error is kept for the exit code, after the key's verdict too is shown.
 */
async function clusterChecks(
  flags: CheckFlags,
  ctx: CliContext,
  out: Reporter,
  hasKey: boolean,
): Promise<{ results: CheckResult[]; failure?: CliError }> {
  let kube: KubeClient;
  try {
    kube = await cliKubeClient(flags, ctx);
  } catch (error) {
    if (!hasKey || !(error instanceof CliError)) throw error;
    const message = `not checked (the CRDs, the operator, RBAC): ${error.message.replace(/\.$/, '')}; pass --kubeconfig to check them too`;
    return { results: [{ check: CLUSTER, ok: true, skipped: true, message }] };
  }
  try {
    return { results: await checkUntil(kube, flags, out) };
  } catch (error) {
    if (!hasKey || !(error instanceof CliError)) throw error;
    return { results: [{ check: CLUSTER, ok: false, message: error.message }], failure: error };
  } finally {
    await kube.close();
  }
}

async function runCheck(flags: CheckFlags, ctx: CliContext): Promise<void> {
  const out = new Reporter(ctx, flags.json === true);
  const projectId = projectIdFrom(flags, ctx);
  const basePath = await basePathCheck(flags, projectId);
  const hasKey = flags.keyFile !== undefined || Boolean(ctx.env[ENV.apiKey]);
  const cluster = await clusterChecks(flags, ctx, out, hasKey);
  const results = [
    ...cluster.results,
    hasKey ? await probeAdminKey(() => apiClient(flags, ctx, cliLogger(ctx)), projectId) : ADMIN_KEY_SKIPPED,
    ...(basePath ? [basePath] : []),
  ];
  for (const r of results) out.event('check', { ...r });
  if (out.mode !== 'json')
    out.resultLines(
      results.map((r) => `${r.skipped ? 'skip' : r.ok ? 'ok  ' : 'FAIL'}  ${r.check}: ${r.message}`),
    );
  // The cluster's own failure keeps its exit code (6 unreachable, 3 credentials refused, ...).
  if (cluster.failure) throw cluster.failure;
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0) {
    const waited = flags.wait ? ` after waiting ${formatDuration(flags.wait)} (--wait)` : '';
    throw new CliError(
      EXIT.notReady,
      `the cluster is not ready for static-export${waited}: ${failed.map((r) => `${r.check} ${r.message}`).join('; ')}.`,
    );
  }
}

export function registerCheck(program: Command, ctx: CliContext): void {
  kubeOptions(
    projectOption(
      apiOptions(program.command('check')),
      "probe the key against this project's exports through the current API revision",
    )
      .summary('check the CRDs, the operator, RBAC and the admin key before using static-export')
      .description(
        `Pre-flight for the cluster (like cmctl check api): the CRDs ${CRD_NAMES.join(' and ')} are installed, ` +
          'established and serve the API version this CLI speaks, and the operator is running: a replica holds its ' +
          'leader election Lease, or (run with --no-leader-election) one of its pods is Ready. RBAC: you may read ' +
          'the releases of --namespace (status, trigger --wait), and, when you may create SubjectAccessReviews, the ' +
          "operator's ServiceAccount may do what the operator does there. With an admin key (--key-file or " +
          `${ENV.apiKey}), one read of a job id no export has, which starts nothing: the key is accepted, not refused ` +
          'for the key or its plan (with --project-id through the current API revision; a 404 there does not tell ' +
          'an unknown project from an unknown job, so the project id is not proven: the first export start proves ' +
          'it). With a key, the key is checked without a cluster too: no kubeconfig skips the cluster checks, an ' +
          'unreachable cluster fails them and keeps its exit code. Each failure says what to do. --wait retries the cluster ' +
          'checks until every one passes (or the Kubernetes API answers). Exit 0 when all pass (or are skipped), ' +
          '7 when one fails (a read RBAC forbids included), 3 when the cluster refuses the credentials, 6 when it is unreachable, ' +
          '2 without a kubeconfig, 1 when its answer is refused (over 64 MiB, or a list that never ends).',
      )
      .option(
        '--base-path <path>',
        'with --project-id: check that the base path starts will send is one the platform knows ("", "/docs", "/documentation"); no read can check it against the deployment',
      )
      .option(
        '-n, --namespace <namespace>',
        'the releases\' namespace whose RBAC is checked (default: the kubeconfig context\'s, else "default")',
      )
      .option('--operator-namespace <namespace>', "the operator's namespace", 'static-export-system')
      .option(
        '--lease-name <name>',
        "the operator's leader election Lease (its --lease-name)",
        'static-export-operator',
      )
      .option(
        '--operator-service-account <name>',
        "the operator's ServiceAccount in --operator-namespace (the chart's full name)",
        'static-export-operator',
      )
      .option(
        '--no-rbac',
        "skip the RBAC checks (helm test's account may read only what the other checks need)",
      )
      .addOption(
        durationOption(ctx, '--wait <duration>', 'retry until every check passes or this long has passed', {
          min: '1s',
        }),
      )
      .option('--json', 'one JSON line per check on stdout instead of human output'),
  )
    .addHelpText('after', `${API_ENV_HELP}\n${PROJECT_ENV_HELP}\n${EXIT_CODES_HELP}`)
    .action((flags: CheckFlags) => runCheck(flags, ctx));
}
