// One call of the admin API as the client's transport sends it, and what callers above the
// transport (the export API's revisions) see of the client: a call, retried and limited.
import type { z } from 'zod';
import type { Operation } from './errors.ts';
import type { ErrorSubject, RevisionAnswers } from './http-errors.ts';

/**
 * When a failed call may be repeated:
 * - `idempotent`: reads, and generate-bundle (it only mints a new link for the same files), so a
 *   repeat after a lost response does no harm.
 * - `create`: a lost response may still have created a job, and a blind repeat would start a second
 *   one. Only failures that prove nothing was created are retried: 429 (the server refused) and
 *   connection failures before the request was sent.
 */
export type RetryClass = 'idempotent' | 'create';

export interface CallSpec<S extends z.ZodType> {
  operation: Operation;
  method: 'GET' | 'POST';
  path: string;
  /** `path` with its ids as placeholders: what metrics name the endpoint by. */
  route: string;
  body?: unknown;
  schema: S;
  retry: RetryClass;
  /** Names the resource in error messages. */
  subject: ErrorSubject;
  /** How the export API revision the call belongs to reads its answers; absent: not an export call. */
  answers?: RevisionAnswers;
  onRateLimited?: (retryAfterMs: number) => void;
}

export interface CallOptions {
  /** Cancels the whole operation, retries included. */
  signal?: AbortSignal;
}

/** The client's transport: one call, with its retries, the per-minute limiter and typed errors. */
export interface AdminApiCalls {
  call<S extends z.ZodType>(spec: CallSpec<S>, signal: AbortSignal | undefined): Promise<z.output<S>>;
}
