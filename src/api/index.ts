export { AgentJobBudget, type AgentJobBudgetOptions, type BudgetReservation } from './budget.ts';
export type { CallOptions } from './call-spec.ts';
export {
  AdminApiClient,
  type AdminApiClientOptions,
  type AdminApiTimeouts,
  type CallStatus,
  type CreateAgentJobOptions,
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
export type {
  ContractJobRef,
  CurrentJobRef,
  ExportJobRef,
  ExportRead,
  ExportRevision,
  ExportRevisionName,
  ExportStatus,
  ExportTarget,
  GeneratedBundle,
  StartLimit,
} from './export-revisions/export-revision.ts';
export {
  bundleOptionsOf,
  describeTarget,
  EXPORT_REVISIONS,
  exportTargetOf,
  type JobRecord,
  jobOfTarget,
  jobRecord,
  oneJobAtATimeOf,
  recordedJobRef,
  revisionOfJob,
  revisionOfSpec,
  revisionOfTarget,
  siteOf,
  slugOf,
} from './export-revisions/revisions.ts';
export { DEFAULT_KEY_PREFIX, validateAdminKey } from './keys.ts';
export { DEFAULT_API_REQUESTS_PER_MINUTE, RequestLimiter } from './request-limiter.ts';
export * from './schemas.ts';
export { HOUR_MS, inWindow, SlidingWindow, type WindowEntry, windowDelayMs } from './sliding-window.ts';
