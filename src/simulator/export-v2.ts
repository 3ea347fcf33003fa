// Revision 2 of the static export API, the platform's current one (VENDOR-FACTS "current
// revision"): project-scoped paths, one active job per deployment (409), 10 starts per organization
// (every key the simulator accepts) in a sliding hour (429), no progress, and a fresh link in every
// GET of a completed job instead of a bundle endpoint. Jobs live in the same store as revision 1's.

import type { IncomingMessage } from 'node:http';
import { type ExportBasePath, ProjectIdSchema, StartExportV2RequestSchema } from '../api/schemas.ts';
import { HOUR_MS, type SlidingWindow } from '../api/sliding-window.ts';
import { EXPORT_STARTS_PER_HOUR } from '../project.ts';
import type { ExportJob, ExportJobs } from './export-jobs.ts';
import type { SiteFault } from './faults.ts';
import { countInWindow, HttpError, parseBody, type Reply, readJson } from './http.ts';

export type ExportV2Route =
  | { revision: 2; endpoint: 'start'; projectId: string }
  | { revision: 2; endpoint: 'status'; projectId: string; jobId: string };

/** A project of the key's organization; every field has a default. */
interface ExportProject {
  /** The site's host; its first label names the download. Default `<projectId lowercased>.docs.example`. */
  domain?: string;
  /** The deployment's configured base path, used when a start names none. Default `""`. */
  basePath?: ExportBasePath;
  /** False: the project's static export is off (401, as the vendor answers). Default true. */
  exportEnabled?: boolean;
}

export interface ExportV2Options {
  /** Projects that differ from the defaults; any other well-formed id is a project too. */
  projects?: Readonly<Record<string, ExportProject>>;
  /** Ids that are no project of the key's organization: 404. */
  unknownProjects?: readonly string[];
  /**
   * Whether the start limit's 429 carries Retry-After (default true). The vendor documents none:
   * false answers as a platform that sends none.
   */
  startLimitRetryAfter?: boolean;
  /**
   * Whether a start refused with 409 counts toward the hourly start limit (the vendor does not say;
   * default false). True: the limit is checked and spent before the 409 check, as a rate limiter in
   * front of the service would.
   */
  conflictsCountTowardStartLimit?: boolean;
}

/** The hourly limit's wording (VENDOR-FACTS: it names the 10 job starts per organization per hour). */
const START_LIMIT_MESSAGE = `Rate limit exceeded. At most ${EXPORT_STARTS_PER_HOUR} job starts per organization per hour.`;

/** The simulator serves one organization: every key's starts count against the same hour. */
const ORGANIZATION = 'organization';

/** What the key presenting a request may do, as the router found it. */
export interface KeyAccess {
  key: string;
  /** The key's plan includes API access and static export. */
  exportPlan: boolean;
  /** The key may start jobs (a read-only key may only look). */
  write: boolean;
}

export class ExportV2 {
  private readonly jobs: ExportJobs;
  private readonly now: () => number;
  private readonly projects: Readonly<Record<string, ExportProject>>;
  private readonly unknown: ReadonlySet<string>;
  private readonly starts = new Map<string, SlidingWindow>();
  /** Projects whose start is between its 409 check and its job's creation. */
  private readonly starting = new Set<string>();
  private readonly retryAfter: boolean;
  private readonly conflictsCount: boolean;

  constructor(jobs: ExportJobs, now: () => number, options: ExportV2Options) {
    this.jobs = jobs;
    this.now = now;
    this.projects = options.projects ?? {};
    this.unknown = new Set(options.unknownProjects ?? []);
    this.retryAfter = options.startLimitRetryAfter ?? true;
    this.conflictsCount = options.conflictsCountTowardStartLimit ?? false;
  }

  /** Records one start of the organization's hour, or throws the hourly 429. */
  private countStart(): void {
    countInWindow(
      this.starts,
      ORGANIZATION,
      this.now,
      HOUR_MS,
      EXPORT_STARTS_PER_HOUR,
      START_LIMIT_MESSAGE,
      this.retryAfter,
    );
  }

  /** `siteFault`: a `start` content fault drawn for this request; `noLink`: a `status:nolink` fault. */
  async handle(
    route: ExportV2Route,
    req: IncomingMessage,
    access: KeyAccess,
    siteFault: SiteFault | undefined,
    noLink = false,
  ): Promise<Reply> {
    const { projectId } = route;
    if (!ProjectIdSchema.safeParse(projectId).success) throw new HttpError(400, 'Malformed project id');
    if (!access.exportPlan) {
      throw new HttpError(401, "Static export is not available on this key's plan: it requires API access");
    }
    if (this.unknown.has(projectId)) {
      throw new HttpError(404, `Project ${projectId} not found in this organization`);
    }
    const project = this.projects[projectId] ?? {};
    if (project.exportEnabled === false) {
      throw new HttpError(401, `Static export is not enabled for project ${projectId}`);
    }
    if (route.endpoint === 'status') {
      const job = this.jobs.get(route.jobId);
      if (!job || job.projectId !== projectId) {
        throw new HttpError(404, `Export job ${route.jobId} not found for this deployment`);
      }
      await this.jobs.settle(job);
      return { status: 200, body: this.view(job, undefined, noLink) };
    }
    if (!access.write) throw new HttpError(403, 'This API key has no write permission');
    const { basePath = project.basePath ?? '' } = parseBody(StartExportV2RequestSchema, await readJson(req));
    if (this.conflictsCount) this.countStart();
    const active = await this.jobs.activeJob(projectId);
    if (active || this.starting.has(projectId)) {
      throw new HttpError(409, 'An export job is already queued or running for this deployment');
    }
    if (!this.conflictsCount) this.countStart();
    this.starting.add(projectId);
    try {
      const domain = project.domain ?? `${projectId.toLowerCase()}.docs.example`;
      const job = await this.jobs.start({ domain, projectId, basePath, ...(siteFault ? { siteFault } : {}) });
      // Viewed at its creation instant: a start always answers queued.
      return { status: 202, body: this.view(job, job.createdAt) };
    } finally {
      this.starting.delete(projectId);
    }
  }

  private view(job: ExportJob, now?: number, noLink = false): Record<string, unknown> {
    const { status, updatedAt, error } = this.jobs.phase(job, now);
    const body: Record<string, unknown> = {
      jobId: job.jobId,
      status,
      createdAt: new Date(job.createdAt).toISOString(),
      updatedAt: new Date(updatedAt).toISOString(),
      error: error ?? null,
    };
    if (status === 'completed' && job.result && !noLink) {
      const link = this.jobs.distinctLink(job);
      body.bundleUrl = link.bundleUrl;
      body.sizeBytes = job.result.sizeBytes;
      body.expiresAt = link.expiresAt.toISOString();
    }
    return body;
  }
}
