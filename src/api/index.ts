export { AgentJobBudget, type AgentJobBudgetOptions, type BudgetReservation } from './budget.ts';
export {
  AdminApiClient,
  type AdminApiClientOptions,
  type AdminApiTimeouts,
  type CallOptions,
  type CallStatus,
  type CreateAgentJobOptions,
  describeTarget,
  type ExportJobRef,
  type ExportStatus,
  type ExportTarget,
  type GeneratedBundle,
  isProjectExport,
  type RetryPolicy,
} from './client.ts';
export {
  AdminApiError,
  type AdminApiErrorInit,
  type AdminApiErrorKind,
  AdminKeyError,
  BadRequestError,
  ConflictError,
  ExportBusyError,
  ExportStartLimitError,
  InvalidResponseError,
  NetworkError,
  NotEntitledError,
  NotFoundError,
  type Operation,
  ProjectNotFoundError,
  RateLimitedError,
  RevisionUnavailableError,
  ServerError,
  startMayHaveCreatedJob,
  TimeoutError,
  UnauthorizedError,
} from './errors.ts';
export { DEFAULT_KEY_PREFIX, validateAdminKey } from './keys.ts';
export { DEFAULT_API_REQUESTS_PER_MINUTE, RequestLimiter } from './request-limiter.ts';
export * from './schemas.ts';
