// What `static-export check` makes of the admin key probe's answers beyond 404, 401, 403 and an
// unreachable API (those run through the CLI against the simulator in check.test.ts).
import { describe, expect, it } from 'vitest';
import { RateLimitedError, RevisionUnavailableError, ServerError } from '../../../src/api/errors.ts';
import { adminKeyCheck } from '../../../src/cli/admin-api-check.ts';

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

  it('passes an error that is no admin API answer on (a bug, not a verdict)', () => {
    expect(() => adminKeyCheck(new TypeError('boom'))).toThrow('boom');
  });
});
