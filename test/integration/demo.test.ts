// `npm run demo` is the README's main command: it must reach Ready, serve the site, show it change
// after new docs and a trigger, and clean up after itself; on the real node where one can run here
// (the site through its Service), and with kwok's fake pods (the pod run as local processes).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeUnavailable } from '../../scripts/control-plane/node.ts';
import { ROOT, run } from '../support/cluster/kube.ts';
import { REAL_NODE_START_TIMEOUT_MS } from '../support/cluster/real-node.ts';

describe.skipIf(process.env.STATIC_EXPORT_TEST_KUBECONFIG)('npm run demo', () => {
  it.each([
    { how: 'on the real node', flags: [] as string[] },
    { how: 'with kwok', flags: ['--kwok'] },
  ])(
    '$how: brings the sample release to Ready, serves the site, shows it change after a trigger, then stops everything',
    async ({ flags }) => {
      // The suite's own real node starts after this file (test/support/cluster/sequencer.ts): one per machine.
      const onNode = flags.length === 0 && (await nodeUnavailable()) === undefined;
      const r = await run(process.execPath, [`${ROOT}/scripts/demo.ts`, '--once', ...flags]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // `kubectl get -o wide`: NAME READY STATUS (the Ready message) AGE VERSION RENEWAL DOMAIN PROJECT …
      // The sample release names the project (the platform's current API): the DOMAIN cell is empty.
      expect(r.stdout).toMatch(
        /docs\s+True\s+.+\s+sha256-[0-9a-f]{64}\s+20\d\d-\S+Z\s+6520f3a1c9b1a20012ab34cd\b/,
      );
      expect(r.stdout).toMatch(/renewalTime\s+20\d\d-/);
      expect(r.stdout).toContain('Published');
      expect(r.stdout).not.toMatch(/sig=/);

      // The chart installed next to the release is rolled by the operator, twice.
      expect(r.stdout).toMatch(
        /The operator rolled deployment\/docs-static-export-site to sha256-[0-9a-f]{64}/,
      );
      expect(r.stdout).toMatch(/Published sha256-[0-9a-f]{64}; the operator rolled the Deployment/);
      // Served by nginx with the chart's config: the home page, then the new page only after the trigger.
      const served = onNode
        ? /Serving the site through service\/docs-static-export-site on (http:\/\/10\.96\.\d+\.\d+:80)\//
        : /Serving the site on (http:\/\/127\.0\.0\.1:\d+)\//;
      const baseUrl = served.exec(r.stdout)?.[1];
      expect(baseUrl, r.stdout).toBeDefined();
      if (onNode)
        expect(r.stdout).toMatch(/docs-static-export-site-\S+\s+1\/1\s+Running\s.*static-export-node/);
      else expect(r.stdout).toContain('No real node: not asked for (--kwok)');
      // The home page is the project's docs/index.md.
      const home = /^# (.+)$/m.exec(readFileSync(join(ROOT, 'docs', 'index.md'), 'utf8'))?.[1];
      expect(/GET \/\s+200\s+(.*)/.exec(r.stdout)?.[1]).toBe(home);
      const pages = [...r.stdout.matchAll(/GET \/whats-new\s+(\d+)\s*(.*)/g)].map((m) =>
        `${m[1]} ${m[2]}`.trim(),
      );
      expect(pages).toEqual(['404 404 Not Found', '200 New in this version']);
      // Stopped: nothing answers there any more; the node's bridge is gone (no request to a Service
      // address, which would leave the machine once the node's route has gone).
      if (onNode) expect(await nodeUnavailable()).toBeUndefined();
      else await expect(fetch(`${baseUrl}/`)).rejects.toThrow();
    },
    REAL_NODE_START_TIMEOUT_MS,
  );
});
