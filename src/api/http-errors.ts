// Maps an admin API HTTP error response to a typed error whose message says what went wrong and
// what to do (status, the server's `error` and `details`, Retry-After).
import { scrub } from '../redact.ts';
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
  ProjectNotFoundError,
  RateLimitedError,
  RevisionUnavailableError,
  ServerError,
  UnauthorizedError,
} from './errors.ts';
import { classifyStartRefusal, parseRetryAfter } from './rate-limits.ts';
import { ErrorBodySchema } from './schemas.ts';

/**
 * Names the resource in error messages. An export call naming a project is of the current
 * revision, whose status codes mean other things than the contract's.
 */
export interface ErrorSubject {
  /** The site a start of the contract's revision names. */
  domain?: string;
  projectId?: string;
  jobId?: string;
  agentJobId?: string;
}

/** How much of the server's text a message quotes: redacted first, then cut. */
const QUOTED_CHARS = 200;
const QUOTED_DETAILS_CHARS = 500;

function quoted(text: string, max = QUOTED_CHARS): string | undefined {
  const clean = scrub(text).trim();
  return (clean.length > max ? `${clean.slice(0, max)}…` : clean) || undefined;
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
    return ` (${quoted(parts.join('; '), QUOTED_DETAILS_CHARS) ?? ''})`;
  }
  return ` (${quoted(typeof details === 'string' ? details : JSON.stringify(details), QUOTED_DETAILS_CHARS) ?? ''})`;
}

/**
 * A 404 that names no resource but the route itself: the server does not have the endpoint (the
 * simulator's and many frameworks' wording: "No such endpoint: POST /v1/…", "Cannot POST /v1/…").
 */
function saysNoSuchEndpoint(serverMessage: string | undefined): boolean {
  return (
    serverMessage !== undefined &&
    /\bno such (endpoint|route)\b|\b(endpoint|route) (does not exist|not found)\b|\bcannot (get|post) \//i.test(
      serverMessage,
    )
  );
}

/** Each revision of the static export API, for messages saying which one the server lacks. */
const REVISIONS = {
  1: {
    name: "revision 1 of the static export API (the contract's POST /v1/static-export/jobs, by domain)",
    instead:
      'The platform retired it: export by project id instead (spec.projectId in a StaticExportRelease, ' +
      '--project-id on the command line; the id is on the API keys page of the dashboard).',
  },
  2: {
    name: "revision 2 of the static export API (the platform's current POST /v1/static-export/{projectId}/jobs, by project id)",
    instead:
      "It serves only the contract's revision: export by domain instead (spec.domain in a StaticExportRelease, " +
      '--domain on the command line), or point the API URL at a server with the current revision.',
  },
} as const;

function revisionUnavailable(
  revision: 1 | 2,
  operation: Operation,
  said: string,
  init: { operation: Operation; status: number; serverMessage?: string },
): RevisionUnavailableError {
  const { name, instead } = REVISIONS[revision];
  return new RevisionUnavailableError(
    `The admin API has no ${name}: it answered ${operation} with 404.${said} ${instead}`,
    init,
  );
}

/**
 * What a start whose answer may follow the job's creation tells the user: the export may run, the
 * attempt counts, and starting again at once may start a second one.
 */
export function mayHaveStartedAdvice(subject: ErrorSubject): string {
  const budget =
    subject.projectId === undefined ? '' : " and counts against the organization's 10 starts per hour";
  return (
    `The export may have started all the same (the platform can create the job before its answer fails, a gateway's 5xx included)${budget}. ` +
    'Do not start again at once: that could run a second export. Wait for the usual length of an export, ' +
    (subject.projectId === undefined
      ? 'then start again.'
      : 'then start again (a 409 means the export is still running).')
  );
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
      serverMessage = quoted(body.data.error);
      details = body.data.details;
    }
  } catch {
    serverMessage = quoted(text);
  }
  const said = serverMessage ? ` The server said: "${serverMessage}".` : '';
  const init = { operation, status, ...(serverMessage === undefined ? {} : { serverMessage }) };
  const isExport = operation === 'startExport' || operation === 'getExport' || operation === 'generateBundle';
  if (isExport && subject.projectId !== undefined) {
    const projectError = projectExportError(operation, subject, status, said, init, retryAfter, details);
    if (projectError) return projectError;
  }
  const unexplained = serverMessage === undefined && details === undefined ? ', without saying why' : '';
  switch (status) {
    case 400:
      return new BadRequestError(
        operation === 'startExport' && subject.domain !== undefined
          ? `The admin API rejected startExport of ${subject.domain} as invalid (400)${unexplained}${detailsText(details)}.${said} ` +
              'Check that the domain is the bare host of the docs site (no scheme, path or port) and that each path is a page of it.'
          : `The admin API rejected ${operation} as invalid (400)${unexplained}${detailsText(details)}.${said} Fix the input and try again.`,
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
      // The contract's start names no resource: its 404 can only mean the endpoint is gone.
      if (isExport && (operation === 'startExport' || saysNoSuchEndpoint(serverMessage))) {
        return revisionUnavailable(1, operation, said, init);
      }
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
      `The admin API failed with HTTP ${status} during ${operation}.${said} ` +
        (operation === 'startExport'
          ? mayHaveStartedAdvice(subject)
          : 'This is usually temporary; try again later.'),
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
 * projects without static export, 403 is about the key's permissions and address allow-list, a
 * start meets 404 without a body for an unknown project, 409 (one active job per deployment) and
 * 429 (10 starts per organization per hour, or the per-minute request limit). Undefined for a
 * status whose meaning does not differ from the contract's.
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
        `The admin API rejected ${operation} of ${project} as invalid (400)` +
          `${init.serverMessage === undefined && details === undefined ? ', without saying why' : ''}` +
          `${detailsText(details)}.${said} ` +
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
      if (saysNoSuchEndpoint(init.serverMessage)) return revisionUnavailable(2, operation, said, init);
      return starting
        ? new ProjectNotFoundError(
            `Project ${subject.projectId} was not found (404) during ${operation};${said} check the project id on the ` +
              "API keys page of the dashboard, and that the key belongs to the project's organization.",
            init,
          )
        : new NotFoundError(
            `Export job ${subject.jobId} of ${project} was not found (404) during ${operation};${said} it may have ` +
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
      const withRetryAfter = retryAfterMs === undefined ? init : { ...init, retryAfterMs };
      if (classifyStartRefusal(init.serverMessage, retryAfterMs) === 'perMinute') {
        return new RateLimitedError(
          `The admin API's per-minute request limit refused startExport of ${project} (429): no export was started.${said} ` +
            `Try again ${retryAfterMs === undefined ? 'in a minute' : `in ${Math.ceil(retryAfterMs / 1000)} s`}; ` +
            'every tool using the key shares about 100 requests a minute.',
          withRetryAfter,
        );
      }
      return new ExportStartLimitError(
        `The platform allows 10 export starts per organization per hour, and they are used up (429 on ${project}); ` +
          `${nextStart(retryAfterMs)}.${said}`,
        withRetryAfter,
      );
    }
  }
  return undefined;
}
