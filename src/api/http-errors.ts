// Maps an admin API HTTP error response to a typed error whose message says what went wrong and
// what to do (status, the server's `error` and `details`, Retry-After).
import {
  type AdminApiError,
  BadRequestError,
  ConflictError,
  ExportBusyError,
  ExportStartLimitError,
  InvalidResponseError,
  NotEntitledError,
  NotFoundError,
  type Operation,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
} from './errors.ts';
import { ErrorBodySchema } from './schemas.ts';

/**
 * Names the resource in error messages. An export call naming a project is of the current
 * revision, whose status codes mean other things than the contract's.
 */
export interface ErrorSubject {
  projectId?: string;
  jobId?: string;
  agentJobId?: string;
}

function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function detailsText(details: unknown): string {
  if (details === undefined || details === null) return '';
  if (Array.isArray(details)) {
    const parts = details.map((d) => {
      const item = d as { path?: unknown; message?: unknown };
      return item && typeof item === 'object' && 'message' in item
        ? `${String(item.path ?? '')}: ${String(item.message)}`.replace(/^: /, '')
        : JSON.stringify(d);
    });
    return ` (${parts.join('; ')})`;
  }
  return ` (${typeof details === 'string' ? details : JSON.stringify(details)})`;
}

/** The typed error for a response that is not 2xx; `text` is its body, `retryAfter` its Retry-After header. */
export function httpError(
  operation: Operation,
  subject: ErrorSubject,
  status: number,
  text: string,
  retryAfter: string | string[] | undefined,
): AdminApiError {
  let serverMessage: string | undefined;
  let details: unknown;
  try {
    const body = ErrorBodySchema.safeParse(JSON.parse(text));
    if (body.success) {
      serverMessage = body.data.error;
      details = body.data.details;
    }
  } catch {
    serverMessage = text.trim().slice(0, 200) || undefined;
  }
  const said = serverMessage ? ` The server said: "${serverMessage}".` : '';
  const init = { operation, status, ...(serverMessage === undefined ? {} : { serverMessage }) };
  const isExport = operation === 'startExport' || operation === 'getExport' || operation === 'generateBundle';
  if (isExport && subject.projectId !== undefined) {
    const projectError = projectExportError(operation, subject, status, said, init, retryAfter, details);
    if (projectError) return projectError;
  }
  switch (status) {
    case 400:
      return new BadRequestError(
        `The admin API rejected ${operation} as invalid (400)${detailsText(details)}.${said} Fix the input and try again.`,
        { ...init, details },
      );
    case 401:
      return new UnauthorizedError(
        `The admin API rejected the API key (401) for ${operation}.${said} Use a current admin key from the ` +
          'API keys page of the dashboard settings; it may have been revoked or belong to another organization.',
        init,
      );
    case 403:
      return new NotEntitledError(
        isExport
          ? `Static export is not enabled for this organization (403): it requires an Enterprise plan.${said} ` +
              'Upgrade the plan or use a key of an organization that has it.'
          : `The API key is not allowed to ${operation} (403).${said} Check the key's organization and plan.`,
        init,
      );
    case 404: {
      const what = subject.jobId
        ? `Export job ${subject.jobId} was not found`
        : subject.agentJobId
          ? `Agent job ${subject.agentJobId} was not found in project ${subject.projectId}`
          : subject.projectId
            ? `Project ${subject.projectId} was not found`
            : 'The endpoint was not found';
      const hint = subject.jobId
        ? 'it may have expired or belong to another organization; start a new export.'
        : subject.projectId
          ? 'check the project id on the API keys page of the dashboard.'
          : 'check the API URL.';
      return new NotFoundError(`${what} (404) during ${operation};${said} ${hint}`, init);
    }
    case 409:
      return new ConflictError(
        operation === 'generateBundle'
          ? `Export job ${subject.jobId} is not completed (409), so no bundle can be generated yet.${said} ` +
              'Poll the job until its status is completed; if it failed, start a new export.'
          : `The admin API refused ${operation} because of a conflicting job (409).${said} Wait for the running ` +
              'job to finish or resume polling it.',
        init,
      );
    case 429: {
      const retryAfterMs = parseRetryAfter(retryAfter);
      const when = retryAfterMs === undefined ? 'later' : `in ${Math.ceil(retryAfterMs / 1000)} s`;
      return new RateLimitedError(
        `The admin API rate limit was hit during ${operation} (429).${said} Try again ${when}.`,
        retryAfterMs === undefined ? init : { ...init, retryAfterMs },
      );
    }
  }
  if (status >= 500) {
    return new ServerError(
      `The admin API failed with HTTP ${status} during ${operation}.${said} This is usually temporary; try again later.`,
      init,
    );
  }
  if (status >= 400) {
    return new BadRequestError(`The admin API refused ${operation} with HTTP ${status}.${said}`, {
      ...init,
      details,
    });
  }
  return new InvalidResponseError(
    `The admin API answered ${operation} with unexpected HTTP ${status}; check the API URL (redirects are not followed).`,
    { ...init, field: '(status)' },
  );
}

/** When the next start is possible, from Retry-After, for a message. */
function nextStart(retryAfterMs: number | undefined): string {
  if (retryAfterMs === undefined) {
    return 'the next start is possible once the oldest start of the past hour is an hour old (the API gave no Retry-After)';
  }
  const at = new Date(Date.now() + retryAfterMs).toISOString().replace(/\.\d+Z$/, 'Z');
  return `the next start is possible in ${Math.ceil(retryAfterMs / 1000)} s (at ${at})`;
}

/**
 * The current revision's reasons (VENDOR-FACTS): 401 also covers plans without API access and
 * projects without static export, 403 is about the key's permissions and address allow-list, and a
 * start meets 409 (one active job per deployment) and 429 (10 starts per organization per hour).
 * Undefined for a status whose meaning does not differ from the contract's.
 */
function projectExportError(
  operation: Operation,
  subject: ErrorSubject,
  status: number,
  said: string,
  init: { operation: Operation; status: number; serverMessage?: string },
  retryAfter: string | string[] | undefined,
  details: unknown,
): AdminApiError | undefined {
  const project = `project ${subject.projectId}`;
  const starting = operation === 'startExport';
  switch (status) {
    case 400:
      return new BadRequestError(
        `The admin API rejected ${operation} of ${project} as invalid (400)${detailsText(details)}.${said} ` +
          (starting
            ? 'Check the project id (API keys page of the dashboard) and that the base path is "", "/docs" or "/documentation".'
            : 'Check the project id (API keys page of the dashboard) and the job id.'),
        { ...init, details },
      );
    case 401:
      return new UnauthorizedError(
        `The admin API refused ${operation} of ${project} (401): the key is wrong or revoked, the organization's plan ` +
          `has no API access, or static export is not enabled for the project.${said} Use a current admin key from ` +
          "the API keys page of the dashboard settings, check that the plan includes API access, and enable static export in the project's settings.",
        init,
      );
    case 403:
      return new NotEntitledError(
        `The API key may not ${starting ? 'start exports of' : 'read exports of'} ${project} (403): it lacks write ` +
          "permission, or this machine's address is not on the key's IP allow-list (an earlier revision of the API " +
          `also answered 403 when static export was not enabled for the project).${said} Use a key with write ` +
          'permission, or add this address to its allow-list.',
        init,
      );
    case 404:
      return new NotFoundError(
        starting
          ? `Project ${subject.projectId} was not found (404) during ${operation};${said} check the project id on the ` +
              "API keys page of the dashboard, and that the key belongs to the project's organization."
          : `Export job ${subject.jobId} of ${project} was not found (404) during ${operation};${said} it may have ` +
              'expired or belong to another project; start a new export.',
        init,
      );
    case 409:
      return starting
        ? new ExportBusyError(
            `An export of ${project} is already queued or running (409): the platform runs one at a time per ` +
              `deployment.${said} Wait for it to finish, then start again.`,
            init,
          )
        : undefined;
    case 429: {
      if (!starting) return undefined;
      const retryAfterMs = parseRetryAfter(retryAfter);
      return new ExportStartLimitError(
        `The platform allows 10 export starts per organization per hour, and they are used up (429 on ${project}); ` +
          `${nextStart(retryAfterMs)}.${said}`,
        retryAfterMs === undefined ? init : { ...init, retryAfterMs },
      );
    }
  }
  return undefined;
}
