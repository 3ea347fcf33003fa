// What every revision of the platform's static export API offers (as the simulator serves one view
// per revision, src/simulator/export-v1.ts and export-v2.ts): start an export, read a job, get a
// link to its bundle, read the answers of its calls, and its start limit. The rest of the code asks
// the revision, never the shape of what it holds; a new revision is one more file and a row in the
// registry (revisions.ts).
import type { AdminApiCalls, CallOptions } from '../call-spec.ts';
import type { RevisionAnswers } from '../http-errors.ts';
import type {
  BundleResult,
  ExportBasePath,
  ExportJob,
  StartExportRequest,
  StartedExport,
} from '../schemas.ts';

/** The contract's revision: exports by domain, jobs named by id alone. */
export interface ContractJobRef {
  revision: 'contract';
  jobId: string;
}

/** The platform's current revision: exports by project, every job path names the project. */
export interface CurrentJobRef {
  revision: 'current';
  projectId: string;
  jobId: string;
}

/** A job, tagged with the revision that started it: it is always read back through that one. */
export type ExportJobRef = ContractJobRef | CurrentJobRef;

export type ExportRevisionName = ExportJobRef['revision'];

/** An export of the current revision: named by project, with an optional base path. */
export interface ProjectExportRequest {
  projectId: string;
  basePath?: ExportBasePath;
}

/** What to export in each revision. */
export interface RevisionTypes {
  contract: { target: StartExportRequest; job: ContractJobRef };
  current: { target: ProjectExportRequest; job: CurrentJobRef };
}

/** What to export; which revision it names, the registry says (revisionOfTarget). */
export type ExportTarget = RevisionTypes[ExportRevisionName]['target'];

export type ExportStatus = ExportJob & { jobId: string };
export type GeneratedBundle = BundleResult & { jobId: string };

/** A job's status and, when the revision's answer carries one, the link to its bundle (a secret). */
export interface ExportRead {
  status: ExportStatus;
  link?: GeneratedBundle;
}

/** How many starts the platform allows in a sliding window (429 beyond). */
export interface StartLimit {
  starts: number;
  windowMs: number;
}

export interface ExportRevision<R extends ExportRevisionName> {
  readonly name: R;
  /** How messages name the revision's API: `the contract's export API (spec.domain)`. */
  readonly title: string;
  /** The platform's limit of starts; undefined: the revision documents none. */
  readonly startLimit: StartLimit | undefined;
  /** How its calls' answers read (the status codes mean other things in each revision). */
  readonly answers: RevisionAnswers;
  /** How messages name the site a target exports. */
  describe(target: RevisionTypes[R]['target']): string;
  /** The site whose exports releases may share (any export options): `example.com`, `project:<id>`. */
  site(target: RevisionTypes[R]['target']): string;
  /** The site as one path segment (a mirror's repository): the domain, or the project id. */
  slug(target: RevisionTypes[R]['target']): string;
  /** What makes a target's bundle: two targets alike in these get the same export. */
  bundleOptions(target: RevisionTypes[R]['target']): unknown[];
  /**
   * What the platform allows one active job at a time for (409 on a start meanwhile): the
   * project; undefined: the revision has no such rule.
   */
  oneJobAtATime(target: RevisionTypes[R]['target']): string | undefined;
  /** The job a start of `target` answered with `jobId`. */
  jobOf(target: RevisionTypes[R]['target'], jobId: string): RevisionTypes[R]['job'];
  /** Starts an export (202). Not blindly retried: a repeat could start a second export. */
  start(
    calls: AdminApiCalls,
    target: RevisionTypes[R]['target'],
    options: CallOptions,
  ): Promise<StartedExport>;
  /** A job's status; with the link when the revision's answer carries one. */
  read(calls: AdminApiCalls, job: RevisionTypes[R]['job'], options: CallOptions): Promise<ExportRead>;
  /** A (fresh) link to the bundle of a completed job. The result holds a secret URL. */
  link(calls: AdminApiCalls, job: RevisionTypes[R]['job'], options: CallOptions): Promise<GeneratedBundle>;
}
