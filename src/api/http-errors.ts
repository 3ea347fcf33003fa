// Maps an admin API HTTP error response to a typed error whose message says what went wrong and
// what to do (status, the server's `error` and `details`, Retry-After). What a status means in an
// export call is its revision's to say (RevisionAnswers, src/api/export-revisions/): this maps
// what the revisions leave, alike for every call.
import { scrub } from '../redact.ts';
import {
  type AdminApiError,
  BadRequestError,
  ConflictError,
  InvalidResponseError,
  NotEntitledError,
  NotFoundError,
  type Operation,
  RateLimitedError,
  RevisionUnavailableError,
  ServerError,
  UnauthorizedError,
} from './errors.ts';
import { parseRetryAfter } from './rate-limits.ts';
import { ErrorBodySchema } from './schemas.ts';

/** Names the resource in error messages. */
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

export function detailsText(details: unknown): string {
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
export function saysNoSuchEndpoint(serverMessage: string | undefined): boolean {
  return (
    serverMessage !== undefined &&
    /\bno such (endpoint|route)\b|\b(endpoint|route) (does not exist|not found)\b|\bcannot (get|post) \//i.test(
      serverMessage,
    )
  );
}

/** How a revision names itself when the server lacks it, and what to use instead. */
export interface RevisionName {
  name: string;
  instead: string;
}

/** A 404 naming no resource but the route: the server does not have the revision's endpoint. */
export function revisionUnavailable(revision: RevisionName, answer: AnswerContext): RevisionUnavailableError {
  return new RevisionUnavailableError(
    `The admin API has no ${revision.name}: it answered ${answer.operation} with 404.${answer.said} ${revision.instead}`,
    answer.init,
  );
}

/**
 * What a start whose answer may follow the job's creation tells the user: the export may run, the
 * attempt counts (`countsToward`: against what, besides), and starting again at once may start a
 * second one (`then`: what to do after waiting).
 */
export function mayHaveStartedAdvice(countsToward: string, then: string): string {
  return (
    `The export may have started all the same (the platform can create the job before its answer fails, a gateway's 5xx included)${countsToward}. ` +
    `Do not start again at once: that could run a second export. Wait for the usual length of an export, ${then}`
  );
}

/** A non-2xx answer as a revision's error mapping sees it. */
export interface AnswerContext {
  operation: Operation;
  subject: ErrorSubject;
  status: number;
  /** ` The server said: "…".`, or empty. */
  said: string;
  /** `, without saying why` when the body gave neither a message nor details, else empty. */
  unexplained: string;
  init: { operation: Operation; status: number; serverMessage?: string };
  details: unknown;
  retryAfter: string | string[] | undefined;
}

/** How one revision of the export API reads the answers of its calls. */
export interface RevisionAnswers {
  /** The typed error for an answer whose meaning is the revision's own; undefined: the common one. */
  error(answer: AnswerContext): AdminApiError | undefined;
  /** What a start whose answer may follow the job's creation tells the user (mayHaveStartedAdvice). */
  mayHaveStarted: string;
}

/** The typed error for a response that is not 2xx; `text` is its body, `retryAfter` its Retry-After header. */
export function httpError(
  operation: Operation,
  subject: ErrorSubject,
  answers: RevisionAnswers | undefined,
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
  const unexplained = serverMessage === undefined && details === undefined ? ', without saying why' : '';
  const revisionError = answers?.error({
    operation,
    subject,
    status,
    said,
    unexplained,
    init,
    details,
    retryAfter,
  });
  if (revisionError) return revisionError;
  switch (status) {
    case 400:
      return new BadRequestError(
        `The admin API rejected ${operation} as invalid (400)${unexplained}${detailsText(details)}.${said} Fix the input and try again.`,
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
        `The API key is not allowed to ${operation} (403).${said} Check the key's organization and plan.`,
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
        `The admin API refused ${operation} because of a conflicting job (409).${said} Wait for the running ` +
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
        (operation === 'startExport' && answers
          ? answers.mayHaveStarted
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
