// What a registry source's failed call means for the user (spec.source.oci): the reason, what to
// fix, and when it is tried again.
import type { FailureReason } from '../crd/reasons.ts';
import { type Failure, failure } from '../failure.ts';
import { OciError, SignatureError } from './errors.ts';

const MINUTE = 60_000;

export function registryFailure(error: unknown): Failure<FailureReason> | undefined {
  if (error instanceof SignatureError) return signatureInvalid(error.message);
  if (!(error instanceof OciError)) return undefined;
  switch (error.reason) {
    case 'Auth':
      return failure(
        'RegistryAuthFailed',
        `The registry refused access: ${error.message}. Put credentials that may pull this repository in the Secret named by spec.source.oci.credentialsSecretRef`,
        true,
        5 * MINUTE,
      );
    case 'NotFound':
      return failure(
        'ImageNotFound',
        `${error.message}: push the site image (static-export mirror push) or fix spec.source.oci`,
        true,
        MINUTE,
      );
    case 'Unavailable':
      return failure('RegistryUnavailable', `The registry is unreachable: ${error.message}`, false);
    case 'Usage':
      return failure('InvalidConfiguration', error.message, true, 5 * MINUTE);
    case 'ContentMismatch':
      return failure(
        'ImageInvalid',
        `The registry sent content that is not what its digest names: ${error.message}. Nothing was published; a registry, cache or proxy on the way altered it or cut it short. Tried again with backoff`,
        false,
      );
    default:
      return failure('ImageInvalid', `The image cannot be used: ${error.message}`, true, 5 * MINUTE);
  }
}

/** The image is unsigned or its signature does not verify with the configured key: nothing is published. */
function signatureInvalid(message: string): Failure<FailureReason> {
  return failure(
    'SignatureInvalid',
    `${message}; nothing was published. Push an image signed with the key whose public half is in the Secret named by spec.source.oci.verify.publicKeySecretRef`,
    true,
    MINUTE,
  );
}
