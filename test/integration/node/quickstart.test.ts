// docs/quickstart.md on the real node, block by block as a user pastes them (issue 22, issue 32's
// proof): the image built from this clone and loaded into the node's containerd the documented way
// (step 0), the operator chart, the simulator chart (and its helm test), one `kubectl apply` of a
// release that follows the simulator's Service, `kubectl wait` until it is Ready, the site chart
// reading the release's values Secret, a port-forward of the site's Service serving the sample docs,
// and the page's clean-up; then README's quickstart block the same way. Each helm install gets one values file more than the page shows (the
// node's taint and name, the node's offline nginx, the CRDs left to the suite: its other files
// share them). Not run here: the kind and Docker variants of step 0 (neither runs on this machine).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { nodePaths, ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import { installCrds, kubectl, kubectlOk, type RunResult } from '../../support/cluster/kube.ts';
import {
  OPERATOR_NS,
  PORT_FORWARD,
  pageShell,
  portForward,
  QUICKSTART_NS,
  shellBlocks,
  shellLine,
} from '../../support/cluster/quickstart.ts';
import {
  REAL_NODE_START_TIMEOUT_MS,
  realNode,
  realNodeUnavailable,
} from '../../support/cluster/real-node.ts';
import { readRepoFile } from '../../support/fixtures/markdown.ts';

const DOCUMENTED_SOCKET = '/run/containerd/containerd.sock';
const blocks = shellBlocks(readRepoFile('docs/quickstart.md'));
const notHere = (b: string) => b.includes('--load kind') || b.includes('docker build');
const forward = (b: string) => b.trim() === shellLine(PORT_FORWARD);
const cleanUp = (b: string) => b.includes('helm uninstall');

describe('the quickstart on the real node, as docs/quickstart.md writes it', () => {
  let why: string | undefined;
  let shell: (block: string) => Promise<RunResult>;
  let forwarding: ChildProcess | undefined;

  /** The page's port-forward, then the sample docs through it. */
  const servesSampleDocs = async () => {
    const forwarded = await portForward();
    forwarding = forwarded.child;
    try {
      for (const [path, heading] of [
        ['/', 'Acme Docs'],
        ['/getting-started', 'Getting started'],
      ] as const) {
        const res = await fetch(`${forwarded.baseUrl}${path}`);
        expect(res.status, path).toBe(200);
        expect(await res.text(), path).toContain(`>${heading}</h1>`);
      }
    } finally {
      forwarding.kill();
    }
  };

  beforeAll(async () => {
    why = await realNodeUnavailable();
    if (why) return;
    await Promise.all([realNode(), installCrds()]);
    shell = pageShell({
      'static-export-operator': { crds: { enabled: false }, ...ON_REAL_NODE },
      'static-export-simulator': ON_REAL_NODE,
      'static-export-site': { nginx: { image: { tag: 'offline' } }, ...ON_REAL_NODE },
    });
  }, REAL_NODE_START_TIMEOUT_MS);

  afterAll(async () => {
    if (why) return;
    forwarding?.kill();
    for (const block of blocks.filter(cleanUp)) await shell(block);
    await kubectl(['delete', 'namespace', QUICKSTART_NS, OPERATOR_NS, '--wait=false']);
  });

  it('knows every block of the page: each is run here, or is one of the two variants this machine lacks', () => {
    expect(blocks.filter(notHere)).toHaveLength(2);
    expect(blocks.filter(forward)).toHaveLength(1);
    expect(blocks.filter(cleanUp)).toHaveLength(1);
    expect(blocks.some((b) => b.includes(`--load containerd --address ${DOCUMENTED_SOCKET}`))).toBe(true);
  });

  it(
    'goes from the image loaded into the node to the sample docs served through a port-forward',
    async ({ skip }) => {
      if (why) return skip(why);
      const socket = nodePaths(inject('controlPlaneDir') as string).containerdSocket;
      for (const block of blocks.filter((b) => !notHere(b) && !forward(b) && !cleanUp(b))) {
        // The node's containerd listens on a socket of its own.
        const r = await shell(block.replaceAll(DOCUMENTED_SOCKET, socket));
        expect(r.code, `${block}\n${r.stdout}\n${r.stderr}`).toBe(0);
        if (block.includes('helm install static-export-simulator'))
          expect(r.stdout).toContain('FOR TRYING ONLY');
      }

      await servesSampleDocs();

      // The simulator's key stays in its Secret: not in the release's status, events or the pods' logs.
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
    20 * 60_000,
  );

  it("the page's clean-up removes the site, the simulator, the release and the operator", async ({
    skip,
  }) => {
    if (why) return skip(why);
    for (const block of blocks.filter(cleanUp)) {
      const r = await shell(block);
      expect(r.code, `${block}\n${r.stderr}`).toBe(0);
    }
    const left = await shell(
      `helm list --namespace ${QUICKSTART_NS} -q\nhelm list --namespace ${OPERATOR_NS} -q`,
    );
    expect(left.stdout.trim()).toBe('');
    expect(await kubectlOk(['get', 'staticexportreleases', '-n', QUICKSTART_NS, '-o', 'name'])).toBe('');
  });

  it(
    "README's quickstart block, with the image loaded into the node's containerd, serves the sample docs",
    async ({ skip }) => {
      if (why) return skip(why);
      const readme = shellBlocks(readRepoFile('README.md')).find((b) => b.includes('# 0. the image'));
      if (!readme) throw new Error("README.md has no quickstart block starting '# 0. the image'");
      const socket = nodePaths(inject('controlPlaneDir') as string).containerdSocket;
      // Its step 0 for a containerd node, as its comment gives it; its last line (the port-forward) is
      // servesSampleDocs's.
      const lines = readme.trimEnd().split('\n');
      expect(lines.at(-1)).toBe(shellLine(PORT_FORWARD));
      expect(readme).toContain('npm run image -- --load kind\n');
      const block = lines
        .slice(0, -1)
        .join('\n')
        .replace(
          'npm run image -- --load kind\n',
          `npm run image -- --load containerd --address ${socket}\n`,
        );
      const r = await shell(block);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      await servesSampleDocs();
    },
    20 * 60_000,
  );
});
