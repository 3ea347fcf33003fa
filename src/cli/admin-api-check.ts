// What `static-export check` says of the admin key. Neither the contract nor VENDOR-FACTS names a
// call that proves a key and the export entitlement without starting an export, so the probe is the
// cheapest read-only export call: the status of a job id no export ever had. 404 means the key was
// accepted and export is allowed, 401 a wrong key, 403 a plan without static export. The contract
// does not say whether the service authenticates before it looks a job up; the simulator does, and
// a service that did not would answer 404 to any key, which this check would then pass. It costs
// one request of the key's per-minute limit.
import { AdminApiError, AdminKeyError } from '../api/errors.ts';
import type { AdminApiClient } from '../api/index.ts';
import type { CheckResult } from './cluster-checks.ts';
import { ENV } from './options.ts';

/** A well-formed job id that no export has: ids are random hex. */
const PROBE_JOB_ID = 'se_0000000000000000';

const CHECK = 'admin API key';

export const ADMIN_KEY_SKIPPED: CheckResult = {
  check: CHECK,
  ok: true,
  skipped: true,
  message: `not checked: no key given; pass --key-file <file> or set ${ENV.apiKey} (with --api-url or ${ENV.apiUrl}) to check that it works and that static export is enabled`,
};

/** The check's verdict on the probe's outcome: undefined when it answered 2xx, else what it threw. */
export function adminKeyCheck(error: unknown): CheckResult {
  if (error === undefined) return { check: CHECK, ok: true, message: 'accepted; static export enabled' };
  // A malformed key (e.g. a public assistant key) is refused before anything is sent.
  if (error instanceof AdminKeyError) return { check: CHECK, ok: false, message: error.message };
  if (!(error instanceof AdminApiError)) throw error;
  switch (error.kind) {
    case 'NotFound':
      return { check: CHECK, ok: true, message: 'accepted; static export enabled' };
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

/** Asks the admin API about PROBE_JOB_ID; never starts an export. */
export async function probeAdminKey(client: () => Promise<AdminApiClient>): Promise<CheckResult> {
  let api: AdminApiClient | undefined;
  try {
    api = await client();
    await api.getExport(PROBE_JOB_ID);
    return adminKeyCheck(undefined);
  } catch (error) {
    return adminKeyCheck(error);
  } finally {
    await api?.close();
  }
}
