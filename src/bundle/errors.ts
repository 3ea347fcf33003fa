import { scrub } from '../redact.ts';

/** Why a bundle could not be fetched, verified or extracted; callers map reasons to exit codes and conditions. */
export type BundleErrorReason =
  /** The link answered 401/403 (expired or bad signature) and no fresh link could be obtained. */
  | 'Expired'
  /** An HTTP status that retrying cannot fix (404, 416, ...), or 5xx after all retries. */
  | 'HttpStatus'
  /** Connection failures or timeouts after all retries. */
  | 'Network'
  /** The download did not finish within its overall deadline. */
  | 'Timeout'
  /** The server or the received byte count disagrees with the expected `sizeBytes`. */
  | 'SizeMismatch'
  /** The archive's sha256 differs from the expected one. */
  | 'DigestMismatch'
  /** The extracted content's version differs from the pinned one. */
  | 'VersionMismatch'
  /** An archive entry would write outside the destination or is a device/FIFO. */
  | 'UnsafeEntry'
  /** The archive or its content exceeds the byte cap. */
  | 'TooLarge'
  /** The archive holds more entries than the cap. */
  | 'TooManyFiles'
  /** Not a readable tar.gz (bad gzip, truncated tar, no entries). */
  | 'Corrupt'
  /** Local filesystem failure (permissions, disk full, cross-device rename). */
  | 'Io'
  /** The extracted site failed the publish gate (no root index.html, too few pages, too large a drop). */
  | 'PublishGate'
  /** The destination holds something this tool did not extract there (no marker file). */
  | 'DestinationNotOurs'
  /** The link leads to an address that is not public (link-destination.ts), without the opt-in. */
  | 'LinkDestinationRefused';

/**
 * The opt-in that lifts LinkDestinationRefused, the CLI's and the operator's flag alike. Here, not in
 * link-destination.ts, so that declaring the flag loads nothing a command does not load already.
 */
export const ALLOW_PRIVATE_FLAG = '--allow-private-bundle-links';

export class BundleError extends Error {
  override readonly name = 'BundleError';
  readonly reason: BundleErrorReason;

  constructor(reason: BundleErrorReason, message: string, options?: { cause?: unknown }) {
    // Messages may quote URLs or server text: scrub so a presigned query never leaks.
    super(scrub(message), options);
    this.reason = reason;
  }
}

export function isBundleError(value: unknown): value is BundleError {
  return value instanceof BundleError;
}
