// What `static-export check` says of the admin key. Neither revision of the API names a call that
// proves a key and the export entitlement without starting an export, so the probe is the cheapest
// read-only export call: the status of a job id no export ever had (never a start, which would use
// one of the organization's 10 starts an hour). 401 and 403 mean different things in the two
// revisions (VENDOR-FACTS). A 404 proves less than it seems, and the verdict says exactly what:
// the service authenticates before it looks a job up (the simulator does; a service that did not
// would answer 404 to any key), but in the current revision the same 404 answers an unknown project
// and a job the project never had, so a mistyped project id passes the probe; the contract's
// revision names no site at all. Only the first export start proves the rest. A 404 naming no
// resource is the server lacking the probed revision: no verdict on the key. It costs one request
// of the key's per-minute limit.
import { AdminApiError, AdminKeyError, RevisionUnavailableError } from '../api/errors.ts';
import type { AdminApiClient, ExportJobRef, ExportRevisionName } from '../api/index.ts';
import type { CheckResult } from './cluster-checks.ts';
import { ENV } from './options.ts';

/** A well-formed job id that no export has: ids are random hex. */
const PROBE_JOB_ID = 'se_0000000000000000';
/**
 * The current revision's ids are 24 hex characters whose first 8 are the job's creation time in
 * seconds (`6520f3a1…`: 2023): zero is 1970, before any job.
 */
const PROJECT_PROBE_JOB_ID = '000000000000000000000000';

const CHECK = 'admin API key';

/** The job the probe reads: one no export has, in the revision --project-id names (none: the contract's). */
function probeJob(projectId: string | undefined): ExportJobRef {
  return projectId === undefined
    ? { revision: 'contract', jobId: PROBE_JOB_ID }
    : { revision: 'current', projectId, jobId: PROJECT_PROBE_JOB_ID };
}

/** What a server without the probed revision lacks, and how to check the other one. */
const UNAVAILABLE: Record<ExportRevisionName, string> = {
  contract:
    "contract's (by domain) static export API (404 naming no resource): check with --project-id, as releases with spec.projectId use it",
  current:
    'current (by project id) static export API (404 naming no resource): check without --project-id, as releases with spec.domain use it',
};

export const ADMIN_KEY_SKIPPED: CheckResult = {
  check: CHECK,
  ok: true,
  skipped: true,
  message: `not checked: no key given; pass --key-file <file> or set ${ENV.apiKey} (with --api-url or ${ENV.apiUrl}) to check that it works and that static export is enabled`,
};

const ACCEPTED: CheckResult = {
  check: CHECK,
  ok: true,
  message:
    'accepted: a read of a job no export has answered 404, not 401 (key) or 403 (plan without static export); ' +
    'it checks no site (no read names a domain): the first export start does',
};

/** The current revision's 401 and 403, for a key probed against `projectId`. */
function projectVerdict(error: AdminApiError, projectId: string): CheckResult | undefined {
  switch (error.kind) {
    case 'NotFound':
      return {
        check: CHECK,
        ok: true,
        message:
          `accepted: a read of a job no export has in project ${projectId} answered 404, not 401 or 403; ` +
          `not proven: that project ${projectId} is in the key's organization with static export enabled (the ` +
          'platform answers an unknown project with the same 404) or that the key may start exports: the first ' +
          'export start proves both (404: unknown project)',
      };
    case 'Unauthorized':
      return {
        check: CHECK,
        ok: false,
        message:
          `refused for project ${projectId} (401): the key is wrong or revoked, the organization's plan has no API ` +
          'access, or static export is not enabled for the project; use a current admin key from the API keys page ' +
          "of the dashboard settings, check the plan, and enable static export in the project's settings",
      };
    case 'Forbidden':
      return {
        check: CHECK,
        ok: false,
        message:
          `accepted, but not allowed for project ${projectId} (403): this machine's address is not on the key's IP ` +
          'allow-list, or the key lacks permission (an earlier revision of the API also answered 403 when static ' +
          'export was not enabled for the project); add this address to the allow-list or use a key with write permission',
      };
    default:
      return undefined;
  }
}

/**
 * The check's verdict on the probe's outcome: undefined when it answered 2xx, else what it threw.
 * With `projectId`, the probe was of the current revision (probeJob).
 */
export function adminKeyCheck(error: unknown, projectId?: string): CheckResult {
  const probe = probeJob(projectId);
  if (error === undefined) return ACCEPTED;
  // A malformed key (e.g. a public assistant key) is refused before anything is sent.
  if (error instanceof AdminKeyError) return { check: CHECK, ok: false, message: error.message };
  if (!(error instanceof AdminApiError)) throw error;
  if (error instanceof RevisionUnavailableError)
    return {
      check: CHECK,
      ok: false,
      message: `not proven: the admin API has no ${UNAVAILABLE[probe.revision]}, or check --api-url`,
    };
  const verdict = probe.revision === 'current' ? projectVerdict(error, probe.projectId) : undefined;
  if (verdict) return verdict;
  switch (error.kind) {
    case 'NotFound':
      return ACCEPTED;
    case 'Unauthorized':
      return {
        check: CHECK,
        ok: false,
        message:
          'refused (401): use a current admin key from the API keys page of the dashboard settings; it may have been revoked or belong to another organization',
      };
    case 'Forbidden':
      return {
        check: CHECK,
        ok: false,
        message:
          'accepted, but static export is not enabled for its organization (403): it requires an Enterprise plan; upgrade the plan or use a key of an organization that has it',
      };
    case 'Network':
    case 'Timeout':
      return { check: CHECK, ok: false, message: `unreachable: ${error.message}` };
    default:
      return { check: CHECK, ok: false, message: `not proven: ${error.message}` };
  }
}

/**
 * Asks the admin API about a job id no export has, of the contract's revision or, with
 * `projectId`, of the current one; never starts an export.
 */
export async function probeAdminKey(
  client: () => Promise<AdminApiClient>,
  projectId?: string,
): Promise<CheckResult> {
  let api: AdminApiClient | undefined;
  const probe = probeJob(projectId);
  try {
    api = await client();
    await api.getExport(probe);
    return adminKeyCheck(undefined, projectId);
  } catch (error) {
    return adminKeyCheck(error, projectId);
  } finally {
    await api?.close();
  }
}
