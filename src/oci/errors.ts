import { scrub } from '../redact.ts';

/** Why a registry operation failed; the CLI maps reasons to exit codes. */
export type OciErrorReason =
  /** A reference, flag or file that cannot be used as given (says which and how to fix it). */
  | 'Usage'
  /** Credentials missing or refused (401 after the challenge), or access denied (403). */
  | 'Auth'
  /** The repository, tag, manifest or blob does not exist. */
  | 'NotFound'
  /** The registry refuses an operation it does not support (405, e.g. deletion disabled). */
  | 'Unsupported'
  /** Connection failures, timeouts, 429 or 5xx after retries. */
  | 'Unavailable'
  /** The registry answered something else than the API says. */
  | 'Protocol'
  /**
   * Content that is not what was asked for: a manifest or blob whose digest is another, or a blob
   * of another size than its descriptor or Content-Length says (altered or cut short on the way).
   */
  | 'ContentMismatch'
  /** An image (archive, layout, manifest) that is not what this tool reads. */
  | 'InvalidImage';

export class OciError extends Error {
  override readonly name = 'OciError';
  readonly reason: OciErrorReason;
  /** HTTP status when the registry answered. */
  readonly status: number | undefined;

  constructor(reason: OciErrorReason, message: string, options?: { cause?: unknown; status?: number }) {
    // Messages may quote registry text or upload locations: scrub so no credential leaks.
    super(scrub(message), options?.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.status = options?.status;
  }
}

export function isOciError(value: unknown): value is OciError {
  return value instanceof OciError;
}

/** Why a signature check failed (the operator reports all three as SignatureInvalid). */
export type SignatureErrorReason =
  /** No `.sig` image for the digest, or one without cosign signature layers. */
  | 'Missing'
  /** A signature verifies with the key but names another manifest: the manifest was replaced. */
  | 'DigestMismatch'
  /** No signature verifies with the key: signed with another key, or the signature was altered. */
  | 'KeyMismatch';

export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  readonly reason: SignatureErrorReason;
  constructor(reason: SignatureErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export function isSignatureError(value: unknown): value is SignatureError {
  return value instanceof SignatureError;
}
