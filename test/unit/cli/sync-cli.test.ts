// `static-export sync` usage errors, refused before the cluster or the registry is touched.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.ts';

describe('static-export sync: usage', () => {
  it('refuses --password-stdin in the sidecar (stdin is read once) and names what to use', async () => {
    const r = await runCli(['sync', '--root', '/tmp/unused', '--secret', 'site', '--password-stdin']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--password-stdin works with --once only');
    expect(r.stderr).toContain('STATIC_EXPORT_REGISTRY_PASSWORD');
  });

  it('names the flag for a --keep that is not a whole number of at least 1, and for a missing --secret', async () => {
    const keep = await runCli(['sync', '--root', '/tmp/unused', '--secret', 'site', '--keep', '0']);
    expect(keep.code).toBe(2);
    expect(keep.stderr).toContain('--keep');
    const secret = await runCli(['sync', '--root', '/tmp/unused']);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain('--secret');
  });
});
