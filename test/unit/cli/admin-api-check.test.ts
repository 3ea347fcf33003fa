// What `static-export check` makes of the admin key probe's answers beyond 404, 401, 403 and an
// unreachable API (those run through the CLI against the simulator in check.test.ts).
import { describe, expect, it } from 'vitest';
import { AdminApiClient } from '../../../src/api/client.ts';
import { RateLimitedError, RevisionUnavailableError, ServerError } from '../../../src/api/errors.ts';
import { adminKeyCheck, probeAdminKey } from '../../../src/cli/admin-api-check.ts';
import { startSimulator } from '../../../src/simulator/index.ts';

describe('adminKeyCheck', () => {
  it('fails without proving the key when the API answers 5xx or 429 after retries, saying so', () => {
    const server = adminKeyCheck(
      new ServerError(
        'The admin API failed with HTTP 503 during getExport. This is usually temporary; try again later.',
        {
          operation: 'getExport',
          status: 503,
        },
      ),
    );
    expect(server).toEqual({
      check: 'admin API key',
      ok: false,
      message:
        'not proven: The admin API failed with HTTP 503 during getExport. This is usually temporary; try again later.',
    });
    const limited = adminKeyCheck(
      new RateLimitedError('The admin API rate limit was hit during getExport (429). Try again in 30 s.', {
        operation: 'getExport',
        status: 429,
      }),
    );
    expect(limited.ok).toBe(false);
    expect(limited.message).toContain('not proven: The admin API rate limit was hit');
  });

  it('fails, proving nothing of the key, when the server lacks the probed revision (a 404 naming no resource)', () => {
    const missing = (projectId?: string) =>
      adminKeyCheck(
        new RevisionUnavailableError('No such endpoint', { operation: 'getExport', status: 404 }),
        projectId,
      );
    expect(missing()).toEqual({
      check: 'admin API key',
      ok: false,
      message:
        "not proven: the admin API has no contract's (by domain) static export API (404 naming no resource): check with --project-id, as releases with spec.projectId use it, or check --api-url",
    });
    expect(missing('acme').message).toContain(
      'has no current (by project id) static export API (404 naming no resource): check without --project-id',
    );
  });

  it('fails when the server lacks the revision probed, naming the one to use, in both directions', async () => {
    const [v1, v2] = await Promise.all([startSimulator(), startSimulator({ apiRevision: 2 })]);
    try {
      const clientOf = (sim: typeof v1) => async () =>
        new AdminApiClient({ baseUrl: sim.baseUrl, apiKey: sim.adminKey, retry: { attempts: 1 } });
      const projectAtV1 = await probeAdminKey(clientOf(v1), 'acme');
      expect(projectAtV1.ok).toBe(false);
      expect(projectAtV1.message).toMatch(/has no current \(by project id\) static export API.*spec\.domain/);
      const domainAtV2 = await probeAdminKey(clientOf(v2));
      expect(domainAtV2.ok).toBe(false);
      expect(domainAtV2.message).toMatch(/has no contract's \(by domain\) static export API.*--project-id/);
      // The revision the server has still passes.
      expect((await probeAdminKey(clientOf(v2), 'acme')).ok).toBe(true);
    } finally {
      await Promise.all([v1.close(), v2.close()]);
    }
  });

  it('passes an error that is no admin API answer on (a bug, not a verdict)', () => {
    expect(() => adminKeyCheck(new TypeError('boom'))).toThrow('boom');
  });
});
