// The error classes come from their own small modules, not the package indexes: loading the API
// client or the simulator here would weigh on every command's startup and memory.
import { AdminApiError, AdminKeyError, ExportStartLimitError } from '../api/errors.ts';
import { BundleError } from '../bundle/errors.ts';
import { OciError, SignatureError } from '../oci/errors.ts';
import { FaultParseError } from '../simulator/faults.ts';

/** Process exit codes of `static-export`; scripts and CI rely on them, so they never change meaning. */
export const EXIT = {
  /** Success. */
  ok: 0,
  /** Unexpected error (a bug). */
  unexpected: 1,
  /** Usage or bad input: unknown or missing flag, invalid value, request refused as invalid (400), unknown id (404). */
  usage: 2,
  /** Authentication or entitlement: missing or malformed key, key refused (401), plan without static export (403). */
  auth: 3,
  /** The export or agent job failed, or the job is in a state that forbids the call (409). */
  jobFailed: 4,
  /** The bundle could not be downloaded (HTTP error, expired link), verified or safely extracted, or its site was refused (--min-pages...), or an image's signature was missing or refused, or a registry sent content other than its digest names. */
  bundle: 5,
  /** Rate limited (429), timed out (--timeout or HTTP), or the API or bundle server unreachable/failing (network, 5xx) after retries. */
  unavailable: 6,
  /** The cluster is not ready for static-export: CRDs missing or not established, the operator not running, RBAC or the admin key insufficient (check, status). */
  notReady: 7,
  /** The organization's export starts for the hour are used up (429 on a start, current API revision; mirror sync: sites left waiting for a start): retrying now cannot help. */
  startLimit: 8,
  /** The admin API's answer was refused as invalid: a field missing or malformed (a job id without bounds, a date beyond 9999), not JSON, over 1 MiB, a redirect. */
  invalidAnswer: 9,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  unexpected error
  2  usage or bad input (flags, values, 400 from the API, unknown id or registry repository/tag)
  3  authentication or entitlement (missing/malformed key, 401, 403 plan without static export,
     registry credentials missing or refused)
  4  export or agent job failed (or 409 conflict)
  5  bundle download, verification or extraction failed, or its site refused (no index.html, too few pages),
     or an image's signature missing or refused, or a registry's content not matching its digest
  6  rate limited, timed out, or API, bundle server, registry or Kubernetes API unreachable after retries
  7  the cluster is not ready: CRDs not installed or not established, the operator not running,
     RBAC missing a permission, or the admin key refused (check)
  8  the hourly export start limit is used up (10 starts per organization and hour; --project-id,
     mirror sync's projectId sites left waiting)
  9  the admin API's answer refused as invalid (a field missing or malformed, not JSON, over 1 MiB,
     a redirect): the platform changed, or a proxy or another server answered`;

/** An error the CLI reports as is, with a chosen exit code. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Bad flags or values: says which flag and how to fix it. */
export function usageError(message: string): CliError {
  return new CliError(EXIT.usage, message);
}

export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof AdminKeyError) return EXIT.auth;
  if (error instanceof FaultParseError) return EXIT.usage;
  if (error instanceof BundleError) {
    switch (error.reason) {
      case 'Network':
      case 'Timeout':
        return EXIT.unavailable;
      case 'DestinationNotOurs':
        return EXIT.usage;
      default:
        return EXIT.bundle;
    }
  }
  if (error instanceof SignatureError) return EXIT.bundle;
  if (error instanceof OciError) {
    switch (error.reason) {
      case 'Usage':
      case 'NotFound':
      case 'Unsupported':
        return EXIT.usage;
      case 'Auth':
        return EXIT.auth;
      case 'Unavailable':
        return EXIT.unavailable;
      case 'InvalidImage':
      case 'ContentMismatch':
        return EXIT.bundle;
      case 'Protocol':
        return EXIT.unexpected;
    }
  }
  if (error instanceof ExportStartLimitError) return EXIT.startLimit;
  if (error instanceof AdminApiError) {
    switch (error.kind) {
      case 'BadRequest':
      case 'NotFound':
        return EXIT.usage;
      case 'Unauthorized':
      case 'Forbidden':
        return EXIT.auth;
      case 'Conflict':
        return EXIT.jobFailed;
      case 'RateLimited':
      case 'Server':
      case 'Network':
      case 'Timeout':
        return EXIT.unavailable;
      case 'InvalidResponse':
        return EXIT.invalidAnswer;
    }
  }
  return EXIT.unexpected;
}
