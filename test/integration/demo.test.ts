// `npm run demo` is the README's main command: it must reach Ready and clean up after itself.
import { describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/kube.ts';

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('npm run demo', () => {
  it('brings the sample release to Ready with a version and renewal time, then stops everything', async () => {
    const r = await run(process.execPath, [`${ROOT}/scripts/demo.ts`, '--once']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/docs\s+True\s+sha256-[0-9a-f]{64}\s+20\d\d-\S+Z/);
    expect(r.stdout).toMatch(/renewalTime\s+20\d\d-/);
    expect(r.stdout).toContain('Published');
    expect(r.stdout).not.toMatch(/sig=/);
  });
});
