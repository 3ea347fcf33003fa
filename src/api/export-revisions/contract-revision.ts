// The contract's revision of the static export API (seeds/000; VENDOR-FACTS "earlier revision"):
// POST /v1/static-export/jobs by domain, jobs named by id, a bundle call that mints the link.
import { registerSecret } from '../../redact.ts';
import type { AdminApiCalls, CallOptions } from '../call-spec.ts';
import { BadRequestError, ConflictError, NotEntitledError } from '../errors.ts';
import {
  type AnswerContext,
  detailsText,
  mayHaveStartedAdvice,
  revisionUnavailable,
  saysNoSuchEndpoint,
} from '../http-errors.ts';
import {
  BundleResultSchema,
  ExportJobSchema,
  type StartExportRequest,
  StartedExportSchema,
} from '../schemas.ts';
import type { ExportRevision, GeneratedBundle } from './export-revision.ts';

const UNAVAILABLE = {
  name: "revision 1 of the static export API (the contract's POST /v1/static-export/jobs, by domain)",
  instead:
    'The platform retired it: export by project id instead (spec.projectId in a StaticExportRelease, ' +
    '--project-id on the command line; the id is on the API keys page of the dashboard).',
};

/** The contract's meanings: its start names no resource, so a 404 there means the endpoint is gone. */
function contractError(a: AnswerContext) {
  const starting = a.operation === 'startExport';
  switch (a.status) {
    case 400:
      return starting
        ? new BadRequestError(
            `The admin API rejected startExport of ${a.subject.domain} as invalid (400)${a.unexplained}${detailsText(a.details)}.${a.said} ` +
              'Check that the domain is the bare host of the docs site (no scheme, path or port) and that each path is a page of it.',
            { ...a.init, details: a.details },
          )
        : undefined;
    case 403:
      return new NotEntitledError(
        `Static export is not enabled for this organization (403): it requires an Enterprise plan.${a.said} ` +
          'Upgrade the plan or use a key of an organization that has it.',
        a.init,
      );
    case 404:
      return starting || saysNoSuchEndpoint(a.init.serverMessage)
        ? revisionUnavailable(UNAVAILABLE, a)
        : undefined;
    case 409:
      return a.operation === 'generateBundle'
        ? new ConflictError(
            `Export job ${a.subject.jobId} is not completed (409), so no bundle can be generated yet.${a.said} ` +
              'Poll the job until its status is completed; if it failed, start a new export.',
            a.init,
          )
        : undefined;
  }
  return undefined;
}

const answers = { error: contractError, mayHaveStarted: mayHaveStartedAdvice('', 'then start again.') };

/** Generates (or renews) the bundle link of a completed export. The result holds a secret URL. */
export async function generateBundle(
  calls: AdminApiCalls,
  jobId: string,
  options: CallOptions,
): Promise<GeneratedBundle> {
  const result = await calls.call(
    {
      operation: 'generateBundle',
      method: 'POST',
      path: `/v1/static-export/jobs/${encodeURIComponent(jobId)}/bundle`,
      route: '/v1/static-export/jobs/{jobId}/bundle',
      schema: BundleResultSchema,
      retry: 'idempotent',
      subject: { jobId },
      answers,
    },
    options.signal,
  );
  registerSecret(result.bundleUrl, result.expiresAt);
  return { ...result, jobId: result.jobId ?? jobId };
}

export const contractRevision: ExportRevision<'contract'> = {
  name: 'contract',
  title: "contract's export API (spec.domain)",
  startLimit: undefined,
  answers,
  describe: (target) => target.domain,
  site: (target) => target.domain,
  slug: (target) => target.domain,
  bundleOptions: (target) => [target.domain, target.version ?? null, target.paths ?? null],
  oneJobAtATime: () => undefined,
  jobOf: (_target, jobId) => ({ revision: 'contract', jobId }),

  start(calls, target, options) {
    const body: StartExportRequest = { domain: target.domain };
    if (target.version !== undefined) body.version = target.version;
    if (target.paths !== undefined) body.paths = target.paths;
    return calls.call(
      {
        operation: 'startExport',
        method: 'POST',
        path: '/v1/static-export/jobs',
        route: '/v1/static-export/jobs',
        body,
        schema: StartedExportSchema,
        retry: 'create',
        subject: { domain: target.domain },
        answers,
      },
      options.signal,
    );
  },

  async read(calls, job, options) {
    const status = await calls.call(
      {
        operation: 'getExport',
        method: 'GET',
        path: `/v1/static-export/jobs/${encodeURIComponent(job.jobId)}`,
        route: '/v1/static-export/jobs/{jobId}',
        schema: ExportJobSchema,
        retry: 'idempotent',
        subject: { jobId: job.jobId },
        answers,
      },
      options.signal,
    );
    return { status: { ...status, jobId: status.jobId ?? job.jobId } };
  },

  link: (calls, job, options) => generateBundle(calls, job.jobId, options),
};
