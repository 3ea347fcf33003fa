// The platform's current revision of the static export API (VENDOR-FACTS "current revision"):
// project-scoped paths, one active job per deployment (409), 10 starts per organization and hour
// (429), no progress, and a fresh link in every GET of a completed job instead of a bundle call.
import { EXPORT_STARTS_PER_HOUR } from '../../project.ts';
import { registerSecret } from '../../redact.ts';
import type { AdminApiCalls, CallOptions } from '../call-spec.ts';
import {
  type AdminApiError,
  BadRequestError,
  ConflictError,
  ExportBusyError,
  ExportStartLimitError,
  InvalidResponseError,
  NotEntitledError,
  NotFoundError,
  ProjectNotFoundError,
  RateLimitedError,
  UnauthorizedError,
} from '../errors.ts';
import {
  type AnswerContext,
  detailsText,
  mayHaveStartedAdvice,
  revisionUnavailable,
  saysNoSuchEndpoint,
} from '../http-errors.ts';
import { classifyStartRefusal, parseRetryAfter } from '../rate-limits.ts';
import {
  type ExportJobV2,
  ExportJobV2Schema,
  type StartedExportV2,
  StartedExportV2Schema,
} from '../schemas.ts';
import { HOUR_MS } from '../sliding-window.ts';
import type { CurrentJobRef, ExportRevision, ExportStatus, GeneratedBundle } from './export-revision.ts';

const UNAVAILABLE = {
  name: "revision 2 of the static export API (the platform's current POST /v1/static-export/{projectId}/jobs, by project id)",
  instead:
    "It serves only the contract's revision: export by domain instead (spec.domain in a StaticExportRelease, " +
    '--domain on the command line), or point the API URL at a server with the current revision.',
};

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
function currentError(a: AnswerContext): AdminApiError | undefined {
  const { operation, subject, status, said, init, retryAfter, details } = a;
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
      if (saysNoSuchEndpoint(init.serverMessage)) return revisionUnavailable(UNAVAILABLE, a);
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
        `The platform allows ${EXPORT_STARTS_PER_HOUR} export starts per organization per hour, and they are used up (429 on ${project}); ` +
          `${nextStart(retryAfterMs)}.${said}`,
        withRetryAfter,
      );
    }
  }
  return undefined;
}

const answers = {
  error: currentError,
  mayHaveStarted: mayHaveStartedAdvice(
    ` and counts against the organization's ${EXPORT_STARTS_PER_HOUR} starts per hour`,
    'then start again (a 409 means the export is still running).',
  ),
};

/** A job in the contract's status shape (no progress or page count), its link left out. */
function withoutLink(job: ExportJobV2 | StartedExportV2, jobId: string): ExportStatus {
  return {
    jobId: job.jobId ?? jobId,
    status: job.status,
    error: job.error,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  } as ExportStatus;
}

/** The link a completed job's answer carries (both its fields, else none). */
function completedLink(job: ExportJobV2, ref: CurrentJobRef): GeneratedBundle | undefined {
  if (job.status !== 'completed' || job.bundleUrl === undefined || job.expiresAt === undefined)
    return undefined;
  return {
    jobId: job.jobId ?? ref.jobId,
    bundleUrl: job.bundleUrl,
    expiresAt: job.expiresAt,
    ...(job.sizeBytes === undefined ? {} : { sizeBytes: job.sizeBytes }),
  };
}

function registerLink(job: Pick<ExportJobV2, 'bundleUrl' | 'expiresAt'>): void {
  if (job.bundleUrl !== undefined) registerSecret(job.bundleUrl, job.expiresAt);
}

const seg = encodeURIComponent;

/** Every GET of a completed job carries a fresh link: a secret at once. */
async function getJob(calls: AdminApiCalls, job: CurrentJobRef, options: CallOptions): Promise<ExportJobV2> {
  const status = await calls.call(
    {
      operation: 'getExport',
      method: 'GET',
      path: `/v1/static-export/${seg(job.projectId)}/jobs/${seg(job.jobId)}`,
      route: '/v1/static-export/{projectId}/jobs/{jobId}',
      schema: ExportJobV2Schema,
      retry: 'idempotent',
      subject: { projectId: job.projectId, jobId: job.jobId },
      answers,
    },
    options.signal,
  );
  registerLink(status);
  return status;
}

export const currentRevision: ExportRevision<'current'> = {
  name: 'current',
  title: 'current export API (spec.projectId)',
  startLimit: { starts: EXPORT_STARTS_PER_HOUR, windowMs: HOUR_MS },
  answers,
  describe: (target) =>
    `project ${target.projectId}${target.basePath === undefined ? '' : ` (base path "${target.basePath}")`}`,
  site: (target) => `project:${target.projectId}`,
  slug: (target) => target.projectId,
  bundleOptions: (target) => ['project', target.projectId, target.basePath ?? null],
  oneJobAtATime: (target) => target.projectId,
  jobOf: (target, jobId) => ({ revision: 'current', projectId: target.projectId, jobId }),

  async start(calls, target, options) {
    const started = await calls.call(
      {
        operation: 'startExport',
        method: 'POST',
        path: `/v1/static-export/${seg(target.projectId)}/jobs`,
        route: '/v1/static-export/{projectId}/jobs',
        body: target.basePath === undefined ? {} : { basePath: target.basePath },
        schema: StartedExportV2Schema,
        retry: 'create',
        subject: { projectId: target.projectId },
        answers,
      },
      options.signal,
    );
    registerLink(started);
    return withoutLink(started, started.jobId);
  },

  /** The poll that sees the job complete has the link to publish: no second call. */
  async read(calls, job, options) {
    const answer = await getJob(calls, job, options);
    const link = completedLink(answer, job);
    return { status: withoutLink(answer, job.jobId), ...(link ? { link } : {}) };
  },

  /** The job's GET, which gives a new link each time. */
  async link(calls, job, options) {
    const status = await getJob(calls, job, options);
    const link = completedLink(status, job);
    if (link) return link;
    if (status.status !== 'completed') {
      throw new ConflictError(
        `Export job ${job.jobId} of project ${job.projectId} is ${status.status}, not completed, so it has no bundle ` +
          'link yet. Poll the job until its status is completed; if it failed, start a new export.',
        { operation: 'getExport' },
      );
    }
    // Completed, yet without a link (completedLink needs both fields).
    const field = status.bundleUrl === undefined ? 'bundleUrl' : 'expiresAt';
    throw new InvalidResponseError(
      `The admin API answered getExport of a completed job without a usable "${field}". The API may have ` +
        'changed: upgrade static-export-operator or report the response shape.',
      { operation: 'getExport', field },
    );
  },
};
