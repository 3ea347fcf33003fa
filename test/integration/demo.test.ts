// `npm run demo` is the README's main command: it must reach Ready, serve the site, show it change
// after new docs and a trigger, and clean up after itself.
import { describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/kube.ts';

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('npm run demo', () => {
  it('brings the sample release to Ready, serves the site, shows it change after a trigger, then stops everything', async () => {
    const r = await run(process.execPath, [`${ROOT}/scripts/demo.ts`, '--once']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // `kubectl get -o wide`: NAME READY STATUS (the Ready message) AGE VERSION RENEWAL DOMAIN …
    expect(r.stdout).toMatch(/docs\s+True\s+.+\s+sha256-[0-9a-f]{64}\s+20\d\d-\S+Z\s+docs\.example\.com/);
    expect(r.stdout).toMatch(/renewalTime\s+20\d\d-/);
    expect(r.stdout).toContain('Published');
    expect(r.stdout).not.toMatch(/sig=/);

    // The chart installed next to the release is rolled by the operator, twice.
    expect(r.stdout).toMatch(
      /The operator rolled deployment\/docs-static-export-site to sha256-[0-9a-f]{64}/,
    );
    expect(r.stdout).toMatch(/Published sha256-[0-9a-f]{64}; the operator rolled the Deployment/);
    // Served by nginx with the chart's config: the home page, then the new page only after the trigger.
    const baseUrl = /Serving the site on (http:\/\/127\.0\.0\.1:\d+)\//.exec(r.stdout)?.[1];
    expect(baseUrl).toBeDefined();
    expect(r.stdout).toMatch(/GET \/\s+200\s+Acme Docs/);
    const pages = [...r.stdout.matchAll(/GET \/whats-new\s+(\d+)\s*(.*)/g)].map((m) =>
      `${m[1]} ${m[2]}`.trim(),
    );
    expect(pages).toEqual(['404 404 Not Found', '200 New in this version']);
    // Stopped: nothing answers there any more.
    await expect(fetch(`${baseUrl}/`)).rejects.toThrow();
  });
});
