// The export-job store: jobs, their lifecycle on the simulator clock (queued, running, then
// completed or failed), the bundles they render and fresh links to them. No HTTP here: each
// revision of the static export API shows the same jobs through its own routes (export-v1.ts).

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExportBasePath } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import { type LongTimer, setLongTimeout, wait } from '../timers.ts';
import type { SiteFault } from './faults.ts';
import { type ExportProgressModel, exportProgress } from './progress.ts';
import { listDocs, RenderError, type RenderedBundle, renderBundle } from './site.ts';

/** How long a look at a job waits for a finishing render before answering. */
const RENDER_WAIT_MS = 1500;

export type ExportJobStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface ExportSettings {
  /** Markdown folder exported by every job; the shipped sample docs by default. */
  docsDir: string;
  /** Time from start to completion of an export job. Default 4000. */
  exportDurationMs: number;
  /** How a running export reports progress (see ExportProgressModel). Default linear. */
  exportProgress: ExportProgressModel;
  /** Lifetime of generated bundle links. Default 900. */
  linkTtlSeconds: number;
  /** Pads each bundle with about this many incompressible bytes (benchmarks). */
  padBytes: number;
}

/** What a job exports. */
interface ExportOrder {
  domain: string;
  version?: string;
  paths?: string[];
  /** The site this job renders is bad on purpose (a `start` content fault). */
  siteFault?: SiteFault;
  /** The project (current revision) the job exports: its id has 24 hex characters, as the vendor's. */
  projectId?: string;
  /** Prefix of the site's links: where the bundle will be served. */
  basePath?: ExportBasePath;
}

export interface ExportJob {
  jobId: string;
  domain: string;
  version?: string;
  paths?: string[];
  createdAt: number;
  durationMs: number;
  progressModel: ExportProgressModel;
  docsDir: string;
  totalPages: number;
  siteFault?: SiteFault;
  projectId?: string;
  basePath?: ExportBasePath;
  /** Expiry (epoch s) of the last link handed out, so the next one differs. */
  lastLinkExpiresSec?: number;
  render?: Promise<void>;
  result?: RenderedBundle;
  renderedAt?: number;
  error?: string;
  timer?: LongTimer;
}

/** Where a job stands at one instant, whichever revision shows it. */
interface ExportPhase {
  status: ExportJobStatus;
  /** Epoch ms of the last change. */
  updatedAt: number;
  progress?: number;
  pageCount?: number;
  error?: string;
}

export interface ExportJobSnapshot {
  jobId: string;
  domain: string;
  /** Revision 2: the job's project and the base path its links were rendered for. */
  projectId?: string;
  basePath?: ExportBasePath;
  status: ExportJobStatus;
  progress?: number;
  pageCount?: number;
  error?: string;
  sizeBytes?: number;
  /** Files of the rendered bundle once completed. */
  files?: string[];
}

interface ExportJobsOptions {
  now: () => number;
  /** Read when a job starts, renders or is linked, so a change applies from then on. */
  settings: Readonly<ExportSettings>;
  /** A presigned link to the job's bundle, valid until `expiresSec`. */
  signLink: (jobId: string, expiresSec: number) => string;
  logger?: Logger | undefined;
}

export class ExportJobs {
  private readonly jobs = new Map<string, ExportJob>();
  private readonly options: ExportJobsOptions;
  private workRoot = '';
  private lastMtimeSec = 0;
  /** Renders of purged jobs, still awaited before the scratch space goes. */
  private readonly purgedRenders: Promise<void>[] = [];

  constructor(options: ExportJobsOptions) {
    this.options = options;
  }

  /** Makes the scratch space renders write to. */
  async open(): Promise<void> {
    this.workRoot = await mkdtemp(join(tmpdir(), 'static-export-sim-'));
  }

  async close(): Promise<void> {
    for (const job of this.jobs.values()) job.timer?.clear();
    // Let renders in flight finish before their scratch space goes away.
    await Promise.allSettled([...this.jobs.values()].map((j) => j.render).concat(this.purgedRenders));
    if (this.workRoot) await rm(this.workRoot, { recursive: true, force: true });
  }

  count(): number {
    return this.jobs.size;
  }

  get(jobId: string): ExportJob | undefined {
    return this.jobs.get(jobId);
  }

  /** Forgets a job as the platform's retention does: its GETs and bundle calls answer 404 from now on. */
  purge(jobId: string): boolean {
    const job = this.jobs.get(jobId);
    job?.timer?.clear();
    if (job?.render) this.purgedRenders.push(job.render);
    return this.jobs.delete(jobId);
  }

  async start(order: ExportOrder): Promise<ExportJob> {
    const { settings, now } = this.options;
    const totalPages = (await listDocs(settings.docsDir)).pages.length;
    const job: ExportJob = {
      jobId:
        order.projectId === undefined
          ? `se_${randomBytes(8).toString('hex')}`
          : randomBytes(12).toString('hex'),
      domain: order.domain,
      createdAt: now(),
      durationMs: settings.exportDurationMs,
      progressModel: settings.exportProgress,
      docsDir: settings.docsDir,
      totalPages,
    };
    if (order.version !== undefined) job.version = order.version;
    if (order.siteFault) job.siteFault = order.siteFault;
    if (order.projectId !== undefined) job.projectId = order.projectId;
    if (order.basePath) job.basePath = order.basePath;
    if (order.paths?.length) {
      job.paths = order.paths;
      job.totalPages = Math.min(job.totalPages, order.paths.length);
    }
    this.jobs.set(job.jobId, job);
    // On an injected clock the real timer may fire early: only a job whose time is up renders.
    job.timer = setLongTimeout(() => void this.settle(job), job.durationMs, { unref: true });
    return job;
  }

  /** Starts rendering (once) when the job's time is up; the clock may have been advanced. */
  async settle(job: ExportJob): Promise<void> {
    if (this.options.now() - job.createdAt < job.durationMs) return;
    job.render ??= this.render(job);
    await Promise.race([job.render, wait(RENDER_WAIT_MS)]);
  }

  phase(job: ExportJob, now = this.options.now()): ExportPhase {
    // The job finished when its time was up; rendering on the first look after that is ours.
    const finishedAt = job.createdAt + job.durationMs;
    if (job.error !== undefined) return { status: 'failed', error: job.error, updatedAt: finishedAt };
    if (job.result) {
      return { status: 'completed', progress: 100, pageCount: job.result.pageCount, updatedAt: finishedAt };
    }
    const elapsed = now - job.createdAt;
    const queuedMs = job.durationMs / 10;
    if (elapsed < queuedMs) return { status: 'queued', updatedAt: job.createdAt };
    const progress = exportProgress(job.progressModel, elapsed - queuedMs, job.durationMs - queuedMs);
    if (progress === undefined) return { status: 'running', updatedAt: now };
    const pageCount = Math.floor((job.totalPages * progress) / 100);
    return { status: 'running', updatedAt: now, progress, pageCount };
  }

  /** A fresh link to a completed job's bundle; the bundle itself is reused. */
  freshLink(job: ExportJob): { bundleUrl: string; expiresAt: Date } {
    const expiresSec = Math.floor(this.options.now() / 1000) + this.options.settings.linkTtlSeconds;
    return {
      bundleUrl: this.options.signLink(job.jobId, expiresSec),
      expiresAt: new Date(expiresSec * 1000),
    };
  }

  /**
   * A fresh link that differs from every link handed out for the job before: when two fall in the
   * same second, the expiry moves a second on (the signature covers it).
   */
  distinctLink(job: ExportJob): { bundleUrl: string; expiresAt: Date } {
    const dueSec = Math.floor(this.options.now() / 1000) + this.options.settings.linkTtlSeconds;
    const expiresSec = Math.max(dueSec, (job.lastLinkExpiresSec ?? 0) + 1);
    job.lastLinkExpiresSec = expiresSec;
    return {
      bundleUrl: this.options.signLink(job.jobId, expiresSec),
      expiresAt: new Date(expiresSec * 1000),
    };
  }

  /** The project's job that is queued or running, after letting any whose time is up render. */
  async activeJob(projectId: string): Promise<ExportJob | undefined> {
    const mine = [...this.jobs.values()].filter((j) => j.projectId === projectId);
    await Promise.all(mine.filter((j) => !j.result && j.error === undefined).map((j) => this.settle(j)));
    return mine.find((j) => {
      const { status } = this.phase(j);
      return status === 'queued' || status === 'running';
    });
  }

  snapshot(jobId: string): ExportJobSnapshot | undefined {
    const job = this.jobs.get(jobId);
    if (!job) return undefined;
    const phase = this.phase(job);
    const snapshot: ExportJobSnapshot = { jobId, domain: job.domain, status: phase.status };
    if (job.projectId !== undefined) snapshot.projectId = job.projectId;
    if (job.basePath !== undefined) snapshot.basePath = job.basePath;
    if (phase.progress !== undefined) snapshot.progress = phase.progress;
    if (phase.pageCount !== undefined) snapshot.pageCount = phase.pageCount;
    if (job.error !== undefined) snapshot.error = job.error;
    if (job.result) {
      snapshot.sizeBytes = job.result.sizeBytes;
      snapshot.files = job.result.files;
    }
    return snapshot;
  }

  private async render(job: ExportJob): Promise<void> {
    const { now, settings, logger } = this.options;
    job.timer?.clear();
    // Archive entries carry the export time; bump by a second when two exports share one so a
    // re-export is always byte-different (tar stores whole seconds).
    const mtimeSec = Math.max(Math.floor(now() / 1000), this.lastMtimeSec + 1);
    this.lastMtimeSec = mtimeSec;
    try {
      if (job.domain.startsWith('fail.') || job.siteFault?.kind === 'fail') {
        throw new RenderError(`the site ${job.domain} failed to build`);
      }
      const workDir = join(this.workRoot, job.jobId);
      await mkdir(workDir, { recursive: true });
      const options: Parameters<typeof renderBundle>[0] = {
        docsDir: job.docsDir,
        domain: job.domain,
        workDir,
        mtime: new Date(mtimeSec * 1000),
        padBytes: settings.padBytes,
      };
      if (job.paths) options.paths = job.paths;
      if (job.siteFault) options.siteFault = job.siteFault;
      if (job.basePath) options.basePath = job.basePath;
      job.result = await renderBundle(options);
      job.totalPages = job.result.pageCount;
    } catch (err) {
      job.error =
        err instanceof RenderError ? `Export failed: ${err.message}` : 'Export failed: internal error';
      if (!(err instanceof RenderError)) logger?.error({ err }, 'simulator render failed');
    }
    job.renderedAt = now();
  }
}
