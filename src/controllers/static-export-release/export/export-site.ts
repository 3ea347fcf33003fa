// What a platform release exports, in the revision of the admin API its spec names: spec.domain the
// contract's (jobs named by id), spec.projectId the current one (jobs named by project and id). A
// recorded job is always read back through the revision that started it (its projectId recorded
// beside its id), so editing a release from domain to projectId never loses a job in flight.
import type { ExportJobRef, ExportTarget } from '../../../api/index.ts';
import type { StaticExportReleaseSpec } from '../../../crd/index.ts';

type SiteSpec = Pick<StaticExportReleaseSpec, 'domain' | 'projectId' | 'basePath' | 'export'>;

/** The start request for the release's site. */
export function exportTarget(spec: SiteSpec): ExportTarget {
  if (spec.projectId !== undefined)
    return { projectId: spec.projectId, ...(spec.basePath === undefined ? {} : { basePath: spec.basePath }) };
  return {
    // The platform source: the CRD requires a domain without a project.
    domain: spec.domain ?? '',
    ...(spec.export?.versionLabel ? { version: spec.export.versionLabel } : {}),
    ...(spec.export?.paths ? { paths: spec.export.paths } : {}),
  };
}

/** A recorded job as the client names it: by project in the current revision, by id in the contract's. */
export function jobRef(job: { jobId: string; projectId?: string | undefined }): ExportJobRef {
  return job.projectId === undefined ? job.jobId : { projectId: job.projectId, jobId: job.jobId };
}

/** A job recorded in status (export, current, history) as an action names it: its id and project. */
export function recordedJob(r: { jobId?: string | undefined; projectId?: string | undefined }): {
  jobId: string;
  projectId?: string;
} {
  return { jobId: r.jobId ?? '', ...(r.projectId === undefined ? {} : { projectId: r.projectId }) };
}

/** The project of a job the release starts now (recorded beside its id); none in the contract's revision. */
export const startedProject = (spec: SiteSpec) =>
  spec.projectId === undefined ? {} : { projectId: spec.projectId };

/** How events and messages name the site: its domain, or its project (and base path). */
export function siteName(spec: SiteSpec): string {
  if (spec.projectId === undefined) return spec.domain ?? '';
  return `project ${spec.projectId}${spec.basePath === undefined ? '' : ` (base path "${spec.basePath}")`}`;
}

/** The releases that may share exports: same domain, or same project (any base path). */
export function siteKey(spec: SiteSpec): string | undefined {
  if (spec.projectId !== undefined) return `project:${spec.projectId}`;
  return spec.domain;
}
