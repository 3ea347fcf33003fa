// docs/quickstart.md on the real node, command by command as a user runs them (issue 22): the
// operator chart, the simulator chart (and its helm test), one `kubectl apply` of a release that
// follows the simulator's Service, `kubectl wait` until it is Ready, the site chart reading the
// release's values Secret, and a port-forward of the site's Service serving the sample docs. Each
// helm install gets one values file more than the page shows: the node's taint and name, the
// image built here, and the CRDs left to the suite (its other files apply and share them).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import { valuesFile } from '../../support/chart.ts';
import { installCrds, kubectl, kubectlOk } from '../../support/kube.ts';
import {
  APPLY_RELEASE,
  INSTALL_OPERATOR,
  INSTALL_SIMULATOR,
  INSTALL_SITE,
  OPERATOR_NS,
  portForward,
  QUICKSTART_NS,
  runStep,
  TEST_SIMULATOR,
  WAIT_READY,
} from '../../support/quickstart.ts';
import { REAL_NODE_START_TIMEOUT_MS, realNode, realNodeUnavailable } from '../../support/real-node.ts';

describe('the quickstart on the real node', () => {
  let why: string | undefined;
  let forward: ChildProcess | undefined;
  const extra: { operator: string[]; simulator: string[]; site: string[] } = {
    operator: [],
    simulator: [],
    site: [],
  };

  beforeAll(async () => {
    why = await realNodeUnavailable();
    if (why) return;
    const [cp] = await Promise.all([realNode(), installCrds()]);
    const tag = await cp.pushProjectImage();
    extra.operator = ['-f', await valuesFile({ image: { tag }, crds: { enabled: false }, ...ON_REAL_NODE })];
    extra.simulator = ['-f', await valuesFile({ image: { tag }, ...ON_REAL_NODE })];
    extra.site = [
      '-f',
      await valuesFile({ image: { tag }, nginx: { image: { tag: 'offline' } }, ...ON_REAL_NODE }),
    ];
  }, REAL_NODE_START_TIMEOUT_MS);

  afterAll(async () => {
    if (why) return;
    forward?.kill();
    await kubectl(['delete', 'staticexportrelease', 'docs', '-n', QUICKSTART_NS, '--wait']);
    await runStep({
      argv: ['helm', 'uninstall', 'docs', 'static-export-simulator', '-n', QUICKSTART_NS, '--wait'],
    });
    await runStep({ argv: ['helm', 'uninstall', 'static-export-operator', '-n', OPERATOR_NS, '--wait'] });
    await kubectl(['delete', 'namespace', QUICKSTART_NS, OPERATOR_NS, '--wait=false']);
  });

  it(
    'goes from helm install to the sample docs served through a port-forward',
    async ({ skip }) => {
      if (why) return skip(why);
      const step = async (
        name: string,
        result: Promise<{ code: number; stdout: string; stderr: string }>,
      ) => {
        const r = await result;
        expect(r.code, `${name}: ${r.stderr}`).toBe(0);
        return r.stdout;
      };
      await step('install the operator', runStep(INSTALL_OPERATOR, extra.operator));
      const notes = await step('install the simulator', runStep(INSTALL_SIMULATOR, extra.simulator));
      expect(notes).toContain('FOR TRYING ONLY');
      const adminKey = Buffer.from(
        await kubectlOk([
          'get',
          'secret',
          'static-export-simulator',
          '-n',
          QUICKSTART_NS,
          '-o',
          'jsonpath={.data.adminKey}',
        ]),
        'base64',
      ).toString();
      expect(adminKey).toMatch(/^mint_/);
      // Its helm test: an export through the Service with that key, the bundle from the public URL.
      await step('helm test the simulator', runStep(TEST_SIMULATOR));
      await step('apply the release', runStep(APPLY_RELEASE));
      await step('wait until Ready', runStep(WAIT_READY));
      await step('install the site', runStep(INSTALL_SITE, extra.site));

      const forwarded = await portForward();
      forward = forwarded.child;
      for (const [path, heading] of [
        ['/', 'Acme Docs'],
        ['/getting-started', 'Getting started'],
      ] as const) {
        const res = await fetch(`${forwarded.baseUrl}${path}`);
        expect(res.status, path).toBe(200);
        expect(await res.text(), path).toContain(`>${heading}</h1>`);
      }

      // The simulator's key stays in its Secret: not in the release's status, events or the pods' logs.
      const seen = [
        await kubectlOk(['get', 'staticexportrelease', 'docs', '-n', QUICKSTART_NS, '-o', 'yaml']),
        await kubectlOk(['get', 'events', '-n', QUICKSTART_NS, '-o', 'yaml']),
        await kubectlOk(['logs', '-n', QUICKSTART_NS, 'deployment/static-export-simulator']),
        await kubectlOk([
          'logs',
          '-n',
          OPERATOR_NS,
          '-l',
          'app.kubernetes.io/name=static-export-operator',
          '--tail=-1',
        ]),
      ].join('\n');
      expect(seen).not.toContain(adminKey);
      expect(seen).not.toMatch(/[?&]sig=/);
    },
    15 * 60_000,
  );
});
