// The registry of the export API's revisions: which revision a target, a release's spec or a
// recorded job names, and the one place that reads it from their shape. A new revision adds a row
// here, its file, and the fields that name it (spec, CLI flags, status record).
import type { StaticExportReleaseSpec } from '../../crd/index.ts';
import type { AdminApiCalls, CallOptions } from '../call-spec.ts';
import type { StartedExport } from '../schemas.ts';
import { contractRevision } from './contract-revision.ts';
import { currentRevision } from './current-revision.ts';
import type {
  ExportJobRef,
  ExportRead,
  ExportRevision,
  ExportRevisionName,
  ExportTarget,
  GeneratedBundle,
  RevisionTypes,
} from './export-revision.ts';

export const EXPORT_REVISIONS: { readonly [R in ExportRevisionName]: ExportRevision<R> } = {
  contract: contractRevision,
  current: currentRevision,
};

/** A target with the revision it names: the project's (current) or the domain's (contract). */
type NamedTarget = {
  [R in ExportRevisionName]: { revision: ExportRevision<R>; target: RevisionTypes[R]['target'] };
}[ExportRevisionName];

function named(target: ExportTarget): NamedTarget {
  return 'projectId' in target
    ? { revision: currentRevision, target }
    : { revision: contractRevision, target };
}

/** The revision a target names. */
export function revisionOfTarget(target: ExportTarget): ExportRevision<ExportRevisionName> {
  return named(target).revision as ExportRevision<ExportRevisionName>;
}

/** Calls `use` with the target's revision and the target, typed alike. */
function withRevision<T>(
  target: ExportTarget,
  use: <R extends ExportRevisionName>(revision: ExportRevision<R>, target: RevisionTypes[R]['target']) => T,
): T {
  const n = named(target);
  return use(n.revision as ExportRevision<ExportRevisionName>, n.target as never);
}

/** How messages name the site. */
export const describeTarget = (target: ExportTarget): string => withRevision(target, (r, t) => r.describe(t));

/** The site whose exports releases may share: `example.com`, `project:<id>`. */
export const siteOf = (target: ExportTarget): string => withRevision(target, (r, t) => r.site(t));

/** The site as one path segment: the domain, or the project id. */
export const slugOf = (target: ExportTarget): string => withRevision(target, (r, t) => r.slug(t));

/** What makes the target's bundle (see ExportRevision.bundleOptions), its revision first. */
export const bundleOptionsOf = (target: ExportTarget): unknown[] =>
  withRevision(target, (r, t) => r.bundleOptions(t));

/** What one active job at a time is allowed for (a 409 holds it); undefined in a revision without. */
export const oneJobAtATimeOf = (target: ExportTarget): string | undefined =>
  withRevision(target, (r, t) => r.oneJobAtATime(t));

/** The job a start of `target` answered with `jobId`, tagged with its revision. */
export const jobOfTarget = (target: ExportTarget, jobId: string): ExportJobRef =>
  withRevision(target, (r, t) => r.jobOf(t, jobId));

export function startExport(
  calls: AdminApiCalls,
  target: ExportTarget,
  options: CallOptions,
): Promise<StartedExport> {
  return withRevision(target, (r, t) => r.start(calls, t, options));
}

/** The revision a job was started through. */
export function revisionOfJob<R extends ExportRevisionName>(job: RevisionTypes[R]['job']): ExportRevision<R> {
  return EXPORT_REVISIONS[job.revision as R];
}

export function readExport(
  calls: AdminApiCalls,
  job: ExportJobRef,
  options: CallOptions,
): Promise<ExportRead> {
  return revisionOfJob(job).read(calls, job as never, options);
}

export function exportLink(
  calls: AdminApiCalls,
  job: ExportJobRef,
  options: CallOptions,
): Promise<GeneratedBundle> {
  return revisionOfJob(job).link(calls, job as never, options);
}

type SiteSpec = Pick<StaticExportReleaseSpec, 'domain' | 'projectId' | 'basePath' | 'export'>;

/**
 * The start request a platform release's spec names: spec.projectId the current revision's (with
 * spec.basePath), spec.domain the contract's (with spec.export's label and paths); undefined when
 * it names neither (a registry source).
 */
export function exportTargetOf(spec: SiteSpec): ExportTarget | undefined {
  if (spec.projectId !== undefined)
    return { projectId: spec.projectId, ...(spec.basePath === undefined ? {} : { basePath: spec.basePath }) };
  if (spec.domain === undefined) return undefined;
  return {
    domain: spec.domain,
    ...(spec.export?.versionLabel ? { version: spec.export.versionLabel } : {}),
    ...(spec.export?.paths ? { paths: spec.export.paths } : {}),
  };
}

/** The revision a platform release's spec names (the contract's when it names no site). */
export const revisionOfSpec = (spec: SiteSpec): ExportRevision<ExportRevisionName> =>
  revisionOfTarget(exportTargetOf(spec) ?? { domain: '' });

/** A job as status records it (status.export, status.current, status.history). */
export interface JobRecord {
  jobId?: string | undefined;
  revision?: ExportRevisionName | undefined;
  projectId?: string | undefined;
}

/**
 * The job a status record names, tagged with its revision. Records written before the revision was
 * recorded (no `revision`) name it by whether a project sits beside the job id: inferred here, once.
 */
export function recordedJobRef(record: JobRecord): ExportJobRef {
  const jobId = record.jobId ?? '';
  const revision = record.revision ?? (record.projectId === undefined ? 'contract' : 'current');
  return revision === 'current'
    ? { revision, projectId: record.projectId ?? '', jobId }
    : { revision, jobId };
}

/** A job as a new status record writes it: its id, its revision and what else names it. */
export function jobRecord(job: ExportJobRef): Required<Pick<JobRecord, 'jobId' | 'revision'>> & JobRecord {
  return job.revision === 'current'
    ? { jobId: job.jobId, revision: job.revision, projectId: job.projectId }
    : { jobId: job.jobId, revision: job.revision };
}
