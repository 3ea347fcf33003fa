// `npm run image -- --load containerd` on the real node (issue 32, item 1): the image built from this
// clone and imported into the node's containerd (what `kind load` does in a kind node) under the name
// and tag the charts default to, then the operator chart's pod runs it with imagePullPolicy
// IfNotPresent: the kubelet finds it on the node and pulls nothing. Then the CLI from that image with
// `kubectl run`, as docs/cli.md shows (item 4).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { nodePaths, ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import {
  createNamespace,
  eventsFor,
  eventually,
  installCrds,
  kubeconfig,
  kubectl,
  kubectlOk,
  ROOT,
  run,
} from '../../support/cluster/kube.ts';
import { runStep } from '../../support/cluster/quickstart.ts';
import {
  REAL_NODE_START_TIMEOUT_MS,
  realNode,
  realNodeUnavailable,
} from '../../support/cluster/real-node.ts';
import { helm, helmInstall, OPERATOR_CHART_DIR } from '../../support/tools/chart.ts';

const controlPlaneDir = inject('controlPlaneDir');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const IMAGE = `ghcr.io/static-export-operator/static-export:${VERSION}`;
const RELEASE = 'loaded';

interface Pod {
  metadata: { name: string };
  spec: { containers: { image: string; imagePullPolicy: string }[] };
  status: { conditions?: { type: string; status: string }[] };
}

describe.runIf(controlPlaneDir)('npm run image -- --load containerd on the real node', () => {
  let why: string | undefined;
  let ns = '';
  let socket = '';
  const ctr = (args: string[]) => run('ctr', ['--address', socket, '-n', 'k8s.io', ...args]);

  beforeAll(async () => {
    why = await realNodeUnavailable();
    if (why) return;
    await Promise.all([realNode(), installCrds()]);
    socket = nodePaths(controlPlaneDir as string).containerdSocket;
    ns = await createNamespace('loaded');
  }, REAL_NODE_START_TIMEOUT_MS);

  afterAll(async () => {
    if (why) return;
    await helm('helm4', ['uninstall', RELEASE, '--kubeconfig', kubeconfig(), '-n', ns, '--wait']);
    await kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it(
    'imports the image under the charts’ tag, and the operator chart’s pod runs it without a pull',
    async ({ skip }) => {
      if (why) return skip(why);
      // Whatever an earlier test pulled goes first: the pod must find the imported image.
      await ctr(['images', 'rm', IMAGE]);
      expect((await ctr(['images', 'ls', '-q'])).stdout.split('\n')).not.toContain(IMAGE);

      const loaded = await runStep({
        argv: ['npm', 'run', 'image', '--', '--load', 'containerd', '--address', socket],
      });
      expect(loaded.code, loaded.stderr).toBe(0);
      expect(loaded.stderr).toContain(`.image/static-export-${VERSION}.tar`);
      expect((await ctr(['images', 'ls', '-q'])).stdout.split('\n')).toContain(IMAGE);

      // The chart's defaults name the image: no image value, only the node's placement.
      const installed = await helmInstall('helm4', {
        release: RELEASE,
        chart: OPERATOR_CHART_DIR,
        namespace: ns,
        values: { replicaCount: 1, crds: { enabled: false }, watchNamespaces: [ns], ...ON_REAL_NODE },
      });
      expect(installed.code, installed.stderr).toBe(0);
      const pod = await eventually(
        'the operator pod Ready',
        async () => {
          const list = JSON.parse(
            await kubectlOk([
              'get',
              'pods',
              '-n',
              ns,
              '-l',
              'app.kubernetes.io/name=static-export-operator',
              '-o',
              'json',
            ]),
          ) as { items: Pod[] };
          return list.items.find((p) =>
            p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
        },
        180_000,
      );
      expect(pod.spec.containers.map((c) => [c.image, c.imagePullPolicy])).toEqual([[IMAGE, 'IfNotPresent']]);
      const pulled = (await eventsFor(ns, pod.metadata.name)).filter(
        (e) => e.reason === 'Pulled' || e.reason === 'Pulling',
      );
      expect(pulled.map((e) => e.note)).toEqual([
        expect.stringMatching(new RegExp(`^Container image "${IMAGE}" already present on machine`)),
      ]);
    },
    15 * 60_000,
  );

  // docs/cli.md's `kubectl run`: the image's entrypoint is the CLI, so the arguments are its command.
  it('runs the CLI from the image with kubectl run: --version, and status with a ServiceAccount that may read releases', async ({
    skip,
  }) => {
    if (why) return skip(why);
    // `kubectl run --attach` can attach after a fast process has exited and print nothing (a race
    // of kubectl's, not the image's): such a run is made again, up to three times.
    const runCli = async (name: string, spec: object, args: string[]) => {
      let result = await runOnce(name, spec, args);
      for (
        let i = 0;
        i < 2 && result.code === 0 && result.stdout.trim() === '' && result.stderr.trim() === '';
        i++
      )
        result = await runOnce(name, spec, args);
      return result;
    };
    const runOnce = (name: string, spec: object, args: string[]) =>
      kubectl([
        'run',
        name,
        '--rm',
        '--attach',
        '--quiet',
        '--restart=Never',
        `--image=${IMAGE}`,
        '--namespace',
        ns,
        `--overrides=${JSON.stringify({ apiVersion: 'v1', spec: { ...ON_REAL_NODE, ...spec } })}`,
        '--',
        ...args,
      ]);
    const version = await runCli('static-export-version', {}, ['--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    // The operator chart's ServiceAccount reads the releases of the namespace it watches.
    const status = await runCli(
      'static-export-status',
      { serviceAccountName: `${RELEASE}-static-export-operator` },
      ['status', '--namespace', ns],
    );
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout + status.stderr).toContain(`No StaticExportReleases in namespace ${ns}.`);
  });
});
