// Typed admin API errors. Messages say what went wrong and what to do about it; they pass through
// `scrub`, so neither the admin key nor a presigned URL can leak through server-provided text.

import { scrub } from '../redact.ts';

export type AdminApiErrorKind =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'RateLimited'
  | 'Server'
  | 'Network'
  | 'Timeout'
  | 'InvalidResponse';

export type Operation =
  | 'createAgentJob'
  | 'getAgentJob'
  | 'sendAgentMessage'
  | 'startExport'
  | 'getExport'
  | 'generateBundle';

export interface AdminApiErrorInit {
  operation: Operation;
  status?: number;
  /** The server's `error` text, if any. */
  serverMessage?: string;
  cause?: unknown;
}

export class AdminApiError extends Error {
  override name = 'AdminApiError';
  readonly kind: AdminApiErrorKind;
  readonly operation: Operation;
  readonly status: number | undefined;
  readonly serverMessage: string | undefined;

  constructor(kind: AdminApiErrorKind, message: string, init: AdminApiErrorInit) {
    super(scrub(message), init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = kind;
    this.operation = init.operation;
    this.status = init.status;
    this.serverMessage = init.serverMessage === undefined ? undefined : scrub(init.serverMessage);
  }
}

export class BadRequestError extends AdminApiError {
  override name = 'BadRequestError';
  /** The server's `details` (e.g. which field is invalid), as sent. */
  readonly details: unknown;
  constructor(message: string, init: AdminApiErrorInit & { details?: unknown }) {
    super('BadRequest', message, init);
    this.details = init.details;
  }
}

export class UnauthorizedError extends AdminApiError {
  override name = 'UnauthorizedError';
  constructor(message: string, init: AdminApiErrorInit) {
    super('Unauthorized', message, init);
  }
}

/** 403: the key is valid but the organization's plan does not include the feature. */
export class NotEntitledError extends AdminApiError {
  override name = 'NotEntitledError';
  constructor(message: string, init: AdminApiErrorInit) {
    super('Forbidden', message, init);
  }
}

export class NotFoundError extends AdminApiError {
  override name = 'NotFoundError';
  constructor(message: string, init: AdminApiErrorInit) {
    super('NotFound', message, init);
  }
}

export class ConflictError extends AdminApiError {
  override name = 'ConflictError';
  constructor(message: string, init: AdminApiErrorInit) {
    super('Conflict', message, init);
  }
}

/** 404 on a start of the current revision: the project is unknown or not in the key's organization. */
export class ProjectNotFoundError extends NotFoundError {
  override name = 'ProjectNotFoundError';
}

/**
 * 404 naming no resource ("No such endpoint"): the server does not have this revision of the export
 * API at all (for example the contract's `/v1/static-export/jobs` after the platform removed it).
 */
export class RevisionUnavailableError extends NotFoundError {
  override name = 'RevisionUnavailableError';
}

/** 409 on a start of the current revision: the project already has an export queued or running. */
export class ExportBusyError extends ConflictError {
  override name = 'ExportBusyError';
}

export class RateLimitedError extends AdminApiError {
  override name = 'RateLimitedError';
  /** How long to wait before trying again, when known. */
  readonly retryAfterMs: number | undefined;
  /** True when the client's own budget refused the call (no request was sent). */
  readonly clientSide: boolean;
  constructor(message: string, init: AdminApiErrorInit & { retryAfterMs?: number; clientSide?: boolean }) {
    super('RateLimited', message, init);
    this.retryAfterMs = init.retryAfterMs;
    this.clientSide = init.clientSide ?? false;
  }
}

/**
 * 429 on a start of the current revision: the organization's 10 starts per hour are used up.
 * Not retried by the client: waiting it out takes up to an hour, and a refused start may count too.
 */
export class ExportStartLimitError extends RateLimitedError {
  override name = 'ExportStartLimitError';
}

export class ServerError extends AdminApiError {
  override name = 'ServerError';
  constructor(message: string, init: AdminApiErrorInit) {
    super('Server', message, init);
  }
}

export class NetworkError extends AdminApiError {
  override name = 'NetworkError';
  /** True when the connection was never established, so the request cannot have reached the server. */
  readonly beforeRequestSent: boolean;
  constructor(message: string, init: AdminApiErrorInit & { beforeRequestSent: boolean }) {
    super('Network', message, init);
    this.beforeRequestSent = init.beforeRequestSent;
  }
}

export class TimeoutError extends AdminApiError {
  override name = 'TimeoutError';
  /** True when the connect step timed out (nothing reached the server). */
  readonly beforeRequestSent: boolean;
  constructor(message: string, init: AdminApiErrorInit & { beforeRequestSent: boolean }) {
    super('Timeout', message, init);
    this.beforeRequestSent = init.beforeRequestSent;
  }
}

export class InvalidResponseError extends AdminApiError {
  override name = 'InvalidResponseError';
  /** The response field that was missing or malformed (`(body)` when the body was not JSON). */
  readonly field: string;
  constructor(message: string, init: AdminApiErrorInit & { field: string }) {
    super('InvalidResponse', message, init);
    this.field = init.field;
  }
}

/**
 * Whether a failed start may still have created the job: any answer that can follow the job's
 * creation (every 5xx, gateways included: a gateway may answer 502/504 after the service created
 * it), no answer after the request was written, or an accepted (2xx) or failed (5xx) answer the
 * client could not use (no job id, not JSON, too large). Such a start spends its slot of the hourly
 * budget and must not be repeated until the job is found or the outcome wait ends.
 */
export function startMayHaveCreatedJob(error: unknown): boolean {
  return (
    error instanceof ServerError ||
    ((error instanceof NetworkError || error instanceof TimeoutError) && !error.beforeRequestSent) ||
    (error instanceof InvalidResponseError &&
      error.operation === 'startExport' &&
      error.status !== undefined &&
      (error.status < 300 || error.status >= 500))
  );
}

/** Raised before any request when an admin key is unusable. Never quotes the key. */
export class AdminKeyError extends Error {
  override name = 'AdminKeyError';
}
