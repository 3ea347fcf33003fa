// What a refused or failed Kubernetes API call means for the user: a write that is tried again with
// backoff. The reason is one of the documented ones (src/crd/reasons.ts, a layer above this one).
import { type Failure, failure } from '../failure.ts';
import { KubeApiError } from './kube-client.ts';

export function kubeApiFailure(error: unknown): Failure<'TargetFailed'> | undefined {
  if (!(error instanceof KubeApiError)) return undefined;
  return failure('TargetFailed', `Writing to the Kubernetes API failed: ${error.message}`, false);
}
