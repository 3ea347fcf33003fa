// Revision 1 of the static export API, the contract's paths (VENDOR-FACTS "earlier revision"):
// start by domain, a status with live progress and pageCount, and a bundle endpoint that signs a
// fresh link (409 until the job completed). Another revision's routes go beside this file, over
// the same store.

import type { IncomingMessage } from 'node:http';
import { StartExportRequestSchema } from '../api/schemas.ts';
import type { ExportJob, ExportJobs } from './export-jobs.ts';
import type { SiteFault } from './faults.ts';
import { HttpError, parseBody, type Reply, readJson } from './http.ts';

export type ExportV1Route = { endpoint: 'start' } | { endpoint: 'status' | 'bundle'; jobId: string };

/** `siteFault`: a `start` content fault drawn for this request. */
export async function exportV1(
  jobs: ExportJobs,
  route: ExportV1Route,
  req: IncomingMessage,
  siteFault: SiteFault | undefined,
): Promise<Reply> {
  switch (route.endpoint) {
    case 'start': {
      const order = parseBody(StartExportRequestSchema, await readJson(req));
      const job = await jobs.start(siteFault ? { ...order, siteFault } : order);
      // Viewed at its creation instant: the start response always says queued, as the contract does.
      return { status: 202, body: view(jobs, job, job.createdAt) };
    }
    case 'status': {
      const job = jobOr404(jobs, route.jobId);
      await jobs.settle(job);
      return { status: 200, body: view(jobs, job) };
    }
    case 'bundle': {
      const job = jobOr404(jobs, route.jobId);
      await jobs.settle(job);
      const { status } = jobs.phase(job);
      if (status === 'failed')
        throw new HttpError(409, `Export job ${job.jobId} failed; start a new export`, { status });
      const { result } = job;
      if (!result) {
        throw new HttpError(409, `Export job ${job.jobId} is not completed yet (status: ${status})`, {
          status,
        });
      }
      const link = jobs.freshLink(job);
      return {
        status: 200,
        body: {
          jobId: job.jobId,
          bundleUrl: link.bundleUrl,
          sizeBytes: result.sizeBytes,
          expiresAt: link.expiresAt.toISOString(),
        },
      };
    }
  }
}

function jobOr404(jobs: ExportJobs, jobId: string): ExportJob {
  const job = jobs.get(jobId);
  if (!job) throw new HttpError(404, `Export job ${jobId} not found`);
  return job;
}

function view(jobs: ExportJobs, job: ExportJob, now?: number): Record<string, unknown> {
  const { updatedAt, ...phase } = jobs.phase(job, now);
  return {
    jobId: job.jobId,
    domain: job.domain,
    ...(job.version === undefined ? {} : { version: job.version }),
    createdAt: new Date(job.createdAt).toISOString(),
    ...phase,
    updatedAt: new Date(updatedAt).toISOString(),
  };
}
