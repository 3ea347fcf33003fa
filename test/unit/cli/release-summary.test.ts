// What `static-export status` reads from a release's status, and its table.
import { describe, expect, it } from 'vitest';
import { formatTable, relative, summarize } from '../../../src/cli/release-summary.ts';
import { failingRelease, servedRelease, VERSION } from '../../support/fixtures/release-status-fixtures.ts';

describe('summarize', () => {
  it('reads Ready, what is served, the link and the rollout', () => {
    expect(summarize(servedRelease('docs', 'docs'))).toEqual({
      namespace: 'docs',
      name: 'docs',
      ready: 'True',
      reason: 'Published',
      message: `Serving ${VERSION}`,
      reconciling: false,
      stalled: false,
      stale: false,
      version: VERSION,
      lastPublished: '2026-01-01T00:00:00Z',
      linkExpiresAt: '2026-01-01T02:00:00Z',
      linkRenewalTime: '2026-01-01T01:20:00Z',
      rollout: 'Complete',
      suspended: false,
    });
  });

  it('says a rollout under way or stalled, and a failure with its reason', () => {
    const rolling = servedRelease('docs', 'a');
    delete rolling.status?.current?.rollout?.completedAt;
    expect(summarize(rolling).rollout).toBe('RollingOut');
    const failing = failingRelease('docs', 'b', 'AuthenticationFailed', 'The admin API refused the key');
    expect(summarize(failing)).toMatchObject({
      ready: 'False',
      reason: 'AuthenticationFailed',
      stalled: true,
    });
  });

  it('says Unknown, naming the likely cause, before the operator first reported', () => {
    const fresh = servedRelease('docs', 'new');
    delete fresh.status;
    expect(summarize(fresh)).toMatchObject({
      ready: 'Unknown',
      reason: 'NotObserved',
      message: expect.stringContaining('is it running and watching this namespace?'),
      stale: true,
    });
  });
});

describe('the table', () => {
  it('has a row per release with times relative to now', () => {
    const now = new Date('2026-01-01T01:00:00Z');
    const table = formatTable([summarize(servedRelease('docs', 'docs'))], now);
    const [head, row] = table.split('\n');
    expect(head).toMatch(
      /^NAMESPACE\s+NAME\s+READY\s+REASON\s+VERSION\s+PUBLISHED\s+LINK EXPIRES\s+RENEWAL\s+ROLLOUT\s+GIT\s+MESSAGE$/,
    );
    expect(row).toMatch(
      /^docs\s+docs\s+True\s+Published\s+sha256-abababababab\s+1h ago\s+in 1h\s+in 20m\s+Complete\s+-\s+Serving sha256-/,
    );
  });

  it("shows a failed Git write-back beside a Ready release: its reason in GIT, its message after Ready's", () => {
    const r = servedRelease('docs', 'docs');
    r.status?.conditions?.push({
      type: 'GitWriteBack',
      status: 'False',
      reason: 'GitAuthRefused',
      message: 'git.example.com/acme/gitops refused the credentials',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    expect(summarize(r)).toMatchObject({
      ready: 'True',
      gitWriteBack: { status: 'False', reason: 'GitAuthRefused' },
    });
    const [, row] = formatTable([summarize(r)], new Date('2026-01-01T01:00:00Z')).split('\n');
    expect(row).toMatch(
      /\sComplete\s+GitAuthRefused\s+Serving sha256-\w+; Git: git.example.com\/acme\/gitops refused/,
    );
  });

  it('writes distances in s, m, h and d', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(relative('2026-01-01T00:00:30Z', now)).toBe('in 30s');
    expect(relative('2025-12-31T23:55:00Z', now)).toBe('5m ago');
    expect(relative('2026-01-01T02:05:00Z', now)).toBe('in 2h5m');
    expect(relative('2026-01-03T00:00:00Z', now)).toBe('in 2d');
    expect(relative(undefined, now)).toBe('-');
  });
});
