// What a platform release exports, in the revision of the admin API its spec names (the registry of
// revisions, src/api/export-revisions/, reads it). A recorded job is always read back through the
// revision that started it (recorded beside its id), so editing a release from domain to
// projectId never loses a job in flight.
import {
  describeTarget,
  type ExportTarget,
  exportTargetOf,
  type JobRecord,
  jobOfTarget,
  jobRecord,
  siteOf,
} from '../../../api/index.ts';
import type { StaticExportReleaseSpec } from '../../../crd/index.ts';

type SiteSpec = Pick<StaticExportReleaseSpec, 'domain' | 'projectId' | 'basePath' | 'export'>;

/** The start request for the release's site (the platform source: the CRD requires one). */
export function exportTarget(spec: SiteSpec): ExportTarget {
  return exportTargetOf(spec) ?? { domain: '' };
}

/** A job recorded in status (export, current, history) as an action names it: as recorded. */
export function recordedJob(r: JobRecord): JobRecord & { jobId: string } {
  return {
    jobId: r.jobId ?? '',
    ...(r.revision === undefined ? {} : { revision: r.revision }),
    ...(r.projectId === undefined ? {} : { projectId: r.projectId }),
  };
}

/** What a job the release starts (or joins) now records beside its id: its revision, and what names it. */
export function startedRevision(spec: SiteSpec): Omit<JobRecord, 'jobId'> {
  const { jobId: _, ...named } = jobRecord(jobOfTarget(exportTarget(spec), ''));
  return named;
}

/** How events and messages name the site: its domain, or its project (and base path). */
export const siteName = (spec: SiteSpec): string => describeTarget(exportTarget(spec));

/** The releases that may share exports: same domain, or same project (any base path). */
export function siteKey(spec: SiteSpec): string | undefined {
  const target = exportTargetOf(spec);
  return target && siteOf(target);
}
