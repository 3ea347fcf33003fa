// The Kubernetes side of the CLI (status, check, trigger --wait): a client from --kubeconfig or the
// usual chain, and its failures as exit codes with messages that name the fix.
import type { Command } from 'commander';
import { API_GROUP, GROUP_VERSION } from '../crd/common.ts';
import { SER_PLURAL } from '../crd/static-export-release.ts';
import { connectionFailure } from '../http.ts';
import { KubeApiError, KubeClient, KubeResponseError } from '../runtime/kube-client.ts';
import type { CliContext } from './context.ts';
import { CliError, EXIT, usageError } from './exit-codes.ts';

export interface KubeFlags {
  kubeconfig?: string;
}

export const KUBECONFIG_HELP = '(default: KUBECONFIG, ~/.kube/config, then in-cluster)';

export function kubeOptions(command: Command): Command {
  return command.option('--kubeconfig <file>', `kubeconfig file ${KUBECONFIG_HELP}`);
}

/** A client for the cluster the kubeconfig names; no kubeconfig at all is a usage error. */
export async function cliKubeClient(flags: KubeFlags, ctx: CliContext): Promise<KubeClient> {
  try {
    return await KubeClient.create(flags.kubeconfig, { env: ctx.env });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') {
      const named =
        flags.kubeconfig === undefined
          ? `the kubeconfig ${e.path ?? ''}`
          : `--kubeconfig ${flags.kubeconfig}`;
      throw usageError(`${named} cannot be read: it does not exist.`);
    }
    throw usageError(`${e.message}.`);
  }
}

export const CRD_FIX =
  'install or upgrade them with the operator chart (helm upgrade --install static-export-operator charts/static-export-operator) or kubectl apply --server-side -f crds/';

/**
 * A failed Kubernetes call as the CLI reports it. `what` names the call ("list StaticExportReleases
 * in docs"); a 404 of a collection means the CRDs are not installed.
 */
export function kubeFailure(error: unknown, what: string, server: string): CliError {
  // Exit 1 (an answer the client cannot understand): retrying the same server gets the same answer.
  if (error instanceof KubeResponseError)
    return new CliError(EXIT.unexpected, `cannot ${what}: ${error.message}.`);
  if (!(error instanceof KubeApiError)) {
    return new CliError(EXIT.unavailable, `the Kubernetes API at ${server} ${connectionFailure(error)}.`);
  }
  switch (error.status) {
    case 401:
      return new CliError(
        EXIT.auth,
        `the Kubernetes API at ${server} refused the kubeconfig's credentials (401) to ${what}: log in again or pick another context.`,
      );
    case 403:
      return new CliError(
        EXIT.auth,
        `not allowed to ${what} (403: ${error.message}): ask for that permission (status and trigger --wait read ${SER_PLURAL}.${API_GROUP}; check reads customresourcedefinitions, and leases and pods in the operator's namespace).`,
      );
    case 404:
      return new CliError(
        EXIT.notReady,
        `cannot ${what}: the API server does not serve ${GROUP_VERSION} ${SER_PLURAL}; the static-export CRDs are not installed: ${CRD_FIX}.`,
      );
    default:
      return error.status >= 500 || error.status === 429
        ? new CliError(
            EXIT.unavailable,
            `the Kubernetes API failed to ${what} (${error.status}: ${error.message}).`,
          )
        : new CliError(
            EXIT.unexpected,
            `the Kubernetes API refused to ${what} (${error.status}: ${error.message}).`,
          );
  }
}
