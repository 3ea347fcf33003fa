// docs/install.md's "The path a cluster user follows" on the real node, block by block as written
// (issue 32's proof), with the image pushed to the registry the node pulls from (its step 1) and
// the CRDs left to the suite (one values file more on each helm install, as in quickstart.test.ts):
// the operator installed, rolled out and `static-export check`ed; the namespace, the admin key
// Secret (the key pasted on standard input) and examples/static-export-release.yaml applied; the
// site chart installed. The page names the platform's real admin API, which no test may reach: the
// run puts an address that cannot resolve (.invalid) in its place, so the release is reported not
// Ready and the site waits for its values Secret; and the release list is read once, not watched (-w).
// Offered beside `check`, `helm test` of the operator chart runs as the page's comment says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, installCrds, kubectl, type RunResult } from '../../support/cluster/kube.ts';
import { OPERATOR_NS, pageShell, QUICKSTART_NS, shellBlocks } from '../../support/cluster/quickstart.ts';
import {
  REAL_NODE_START_TIMEOUT_MS,
  realNode,
  realNodeUnavailable,
} from '../../support/cluster/real-node.ts';
import { getRelease } from '../../support/cluster/resources.ts';
import { readRepoFile } from '../../support/fixtures/markdown.ts';

const page = readRepoFile('docs/install.md');
const path = page.slice(
  page.indexOf('## The path a cluster user follows'),
  page.indexOf('## Where admin keys go'),
);
const blocks = shellBlocks(path);

describe("docs/install.md's path on the real node, as written", () => {
  let why: string | undefined;
  let shell: (block: string, input?: string) => Promise<RunResult>;

  beforeAll(async () => {
    why = await realNodeUnavailable();
    if (why) return;
    const [cp] = await Promise.all([realNode(), installCrds()]);
    await cp.pushProjectImage();
    // The quickstart's test file uses the same namespaces: gone before the page creates them.
    await kubectl([
      'wait',
      '--for=delete',
      `namespace/${QUICKSTART_NS}`,
      `namespace/${OPERATOR_NS}`,
      '--timeout=180s',
    ]);
    shell = pageShell({
      'static-export-operator': { crds: { enabled: false }, ...ON_REAL_NODE },
      'static-export-site': { nginx: { image: { tag: 'offline' } }, ...ON_REAL_NODE },
    });
  }, REAL_NODE_START_TIMEOUT_MS);

  afterAll(async () => {
    if (why) return;
    await shell(
      `helm uninstall docs -n ${QUICKSTART_NS}\nhelm uninstall static-export-operator -n ${OPERATOR_NS} --wait`,
    );
    await kubectl(['delete', 'namespace', QUICKSTART_NS, OPERATOR_NS, '--wait=false']);
  });

  it('installs the operator, a release and the site', async ({ skip }) => {
    if (why) return skip(why);
    expect(blocks).toHaveLength(3);
    const [operator = '', release = '', site = ''] = blocks;
    expect(operator).toContain('--set operator.apiBaseUrl=https://api.mintlify.com\n');
    const installed = await shell(
      operator.replace('https://api.mintlify.com', 'https://api.example.invalid'),
    );
    expect(installed.code, `${installed.stdout}\n${installed.stderr}`).toBe(0);
    expect(installed.stdout).toMatch(/successfully rolled out/);
    expect(installed.stdout).toMatch(/ok\s+operator: .*Lease/);
    const helmTest = /^# or, without the CLI: (helm test .*)$/m.exec(operator)?.[1] ?? '';
    const tested = await shell(helmTest);
    expect(tested.code, `${tested.stdout}\n${tested.stderr}`).toBe(0);
    expect(tested.stdout).toMatch(/Phase:\s+Succeeded/);

    expect(release).toContain(' -o wide -w ');
    // The key as a reader pastes it, line break included (the block drops it).
    const applied = await shell(release.replace(' -o wide -w ', ' -o wide '), 'mint_installdoc0123456789\n');
    expect(applied.code, `${applied.stdout}\n${applied.stderr}`).toBe(0);
    expect(applied.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+AGE\s+VERSION\s+RENEWAL\b/m);
    const seen = await eventually('the operator reports on the release', async () => {
      const r: StaticExportRelease = await getRelease(QUICKSTART_NS, 'docs');
      return r.status?.conditions?.find((c) => c.type === 'Ready');
    });
    expect(seen.status).not.toBe('True');
    const key = await kubectl([
      'get',
      'secret',
      'docs-admin-key',
      '-n',
      QUICKSTART_NS,
      '-o',
      'jsonpath={.data.apiKey}',
    ]);
    expect(Buffer.from(key.stdout, 'base64').toString()).toBe('mint_installdoc0123456789');

    const sited = await shell(site);
    expect(sited.code, `${sited.stdout}\n${sited.stderr}`).toBe(0);
    expect(sited.stdout).toContain('STATUS: deployed');
  });
});
