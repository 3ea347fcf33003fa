// Response and request shapes of the admin API. The contract leaves much "not shown", so the
// schemas are tolerant: unknown fields are kept (loose objects), unknown status strings are kept
// (and treated as not finished), and only what the client cannot work without is required.

import { z } from 'zod';
import { BARE_HOST_RULE, isBareHost } from '../domain.ts';
import { EXPORT_BASE_PATHS, PROJECT_ID_PATTERN } from '../project.ts';

/** A status string the client knows, or any other string the server may add later. */
const openEnum = <const T extends readonly string[]>(_known: T) =>
  z.string().min(1).max(64) as unknown as z.ZodType<T[number] | (string & {})>;

/** Numbers whose type the contract does not show: numeric strings are accepted, anything else dropped. */
const looseNumber = z
  .unknown()
  .transform((v): number | undefined => {
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
    return undefined;
  })
  .optional();

/** An ISO 8601 date-time without a zone (`2030-01-01T00:00:00`): the platform means UTC, not local time. */
const ZONELESS_DATE_TIME = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?$/;

/** The instants a timestamp of the API may name (ISO 8601's four-digit years from 2000). */
const EARLIEST_TIMESTAMP_MS = Date.UTC(2000, 0, 1);
const LATEST_TIMESTAMP_MS = Date.UTC(10000, 0, 1) - 1;

/**
 * A timestamp as an ISO string (read as UTC when it names no zone) or epoch number (seconds or
 * milliseconds), within the years 2000 to 9999: a date beyond could make no timer or message.
 */
const timestamp = z.union([z.string().max(64), z.number()]).transform((v, ctx): Date => {
  const date =
    typeof v === 'number'
      ? new Date(v < 1e12 ? v * 1000 : v)
      : new Date(ZONELESS_DATE_TIME.test(v.trim()) ? `${v.trim().replace(' ', 'T')}Z` : v);
  const ms = date.getTime();
  if (Number.isNaN(ms) || ms < EARLIEST_TIMESTAMP_MS || ms > LATEST_TIMESTAMP_MS) {
    ctx.addIssue({ code: 'custom', message: 'not a valid timestamp between the years 2000 and 9999' });
    return z.NEVER;
  }
  return date;
});

/** Longest job id the client accepts (the platform's are 24 characters, the contract's 19). */
export const MAX_JOB_ID_LENGTH = 128;

/**
 * A job id as the client keeps it (in paths, CR status, messages): 1 to 128 letters, digits and
 * `_ . : -`, starting with a letter or digit. Anything else is a hostile or broken answer.
 */
export const JobIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, { message: 'must be letters, digits, "_", ".", ":" or "-"' })
  .max(MAX_JOB_ID_LENGTH, { message: `must be at most ${MAX_JOB_ID_LENGTH} characters` });

/** A job's failure text, cut to what a message or a condition can show. */
const MAX_JOB_ERROR_CHARS = 1000;

/** A free-form time the client only shows: dropped when it is not a short string. */
const shownTime = z.string().max(64).optional().catch(undefined);

export const ErrorBodySchema = z.looseObject({
  error: z.string(),
  details: z.unknown().optional(),
});

const AGENT_JOB_STATUSES = ['active', 'completed', 'archived', 'failed'] as const;
export const AGENT_JOB_FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'archived', 'failed']);

// Which AgentJob fields are always present is "not shown": only id and status are required.
export const AgentJobSchema = z.looseObject({
  id: JobIdSchema,
  status: openEnum(AGENT_JOB_STATUSES),
  source: z
    .looseObject({
      repository: z.string().optional(),
      ref: z.string().nullish(),
    })
    .optional(),
  model: z.string().optional(),
  prLink: z.string().nullish(),
  createdAt: z.string().optional(),
  archivedAt: z.string().nullish(),
});
export type AgentJob = z.infer<typeof AgentJobSchema>;

export const CreateAgentJobRequestSchema = z.object({ prompt: z.string().min(1) });

const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export const EXPORT_FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed']);

/** What a job says in both revisions. The current one sends `error: null` until a job fails. */
const exportJobFields = {
  // The status response may omit the id (the contract only names `status`); the client fills it in.
  jobId: JobIdSchema.optional(),
  status: openEnum(EXPORT_STATUSES),
  error: z
    .string()
    .nullish()
    .transform((v) => (v == null ? undefined : v.slice(0, MAX_JOB_ERROR_CHARS)))
    .optional(),
  createdAt: shownTime,
  updatedAt: shownTime,
};

export const ExportJobSchema = z.looseObject({
  ...exportJobFields,
  progress: looseNumber,
  pageCount: looseNumber,
});
export type ExportJob = z.infer<typeof ExportJobSchema>;

/** The start response must carry the id: every later call needs it. */
export const StartedExportSchema = ExportJobSchema.extend({
  jobId: JobIdSchema,
  status: openEnum(EXPORT_STATUSES).optional(),
});
export type StartedExport = z.infer<typeof StartedExportSchema>;

export const StartExportRequestSchema = z.object({
  // The one domain rule: the simulator refuses what the CLI and the CRD refuse.
  domain: z.string().refine(isBareHost, { message: `must be a bare host (${BARE_HOST_RULE})` }),
  version: z.string().optional(),
  paths: z.array(z.string()).optional(),
});
export type StartExportRequest = z.infer<typeof StartExportRequestSchema>;

// --- The current revision (VENDOR-FACTS "current revision"): project-scoped paths, no progress. ---

export const ProjectIdSchema = z
  .string()
  .regex(new RegExp(PROJECT_ID_PATTERN), { message: 'must be 1 to 64 letters, digits, "_" or "-"' });

export const ExportBasePathSchema = z.enum(EXPORT_BASE_PATHS);
export type ExportBasePath = z.infer<typeof ExportBasePathSchema>;

/** Omitted basePath: the deployment's configured one. An early wording sent no body at all. */
export const StartExportV2RequestSchema = z
  .object({ basePath: ExportBasePathSchema.optional() })
  .optional()
  .transform((body) => body ?? {});

/**
 * The current revision's job, as start and get answer it: no progress or pageCount; a completed
 * job carries a fresh link on every GET.
 */
export const ExportJobV2Schema = z.looseObject({
  ...exportJobFields,
  bundleUrl: z.url({ protocol: /^https?$/ }).optional(),
  sizeBytes: looseNumber,
  expiresAt: timestamp.optional(),
});
export type ExportJobV2 = z.infer<typeof ExportJobV2Schema>;

/** The start response must carry the id: every later call needs it. */
export const StartedExportV2Schema = ExportJobV2Schema.extend({
  jobId: JobIdSchema,
  status: openEnum(EXPORT_STATUSES).optional(),
});
export type StartedExportV2 = z.infer<typeof StartedExportV2Schema>;

export const BundleResultSchema = z.looseObject({
  jobId: JobIdSchema.optional(),
  bundleUrl: z.url({ protocol: /^https?$/ }),
  expiresAt: timestamp,
  sizeBytes: looseNumber,
});
export type BundleResult = z.infer<typeof BundleResultSchema>;

export function isAgentJobFinished(job: Pick<AgentJob, 'status'>): boolean {
  return AGENT_JOB_FINAL_STATUSES.has(job.status);
}

/** Unknown statuses count as not finished: keep polling (the caller's deadline bounds it). */
export function isExportFinished(job: Pick<ExportJob, 'status'>): boolean {
  return EXPORT_FINAL_STATUSES.has(job.status);
}
