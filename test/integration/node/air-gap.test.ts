// Inside the air gap, on the real node (issue 18, item 6): a site version carried in as an archive
// (`mirror save` outside, `mirror load --sign-key` inside) into an internal registry (TLS from an
// internal CA, a login); a release follows the registry with the public key; the site chart's pods
// pull the signed image themselves (`fetch --oci` with the login, the CA and the public key, all
// mounted from Secrets) and serve it through the Service. A pod given another public key refuses
// the image, and the site keeps serving.
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { NODE_IP, ON_REAL_NODE } from '../../../scripts/control-plane/node.ts';
import type { StaticExportRelease } from '../../../src/crd/index.ts';
import { eventually, kubectlOk } from '../../support/cluster/kube.ts';
import { useOperatorSuite } from '../../support/cluster/operator-suite.ts';
import { REAL_NODE_START_TIMEOUT_MS, realNode, statusOf } from '../../support/cluster/real-node.ts';
import { getRelease } from '../../support/cluster/resources.ts';
import { podReady, refusedPod, sitePods } from '../../support/cluster/site-on-node.ts';
import { startRegistry, type TestRegistry } from '../../support/servers/registry.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';
import { CHART_DIR, helmInstall } from '../../support/tools/chart.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';
import { type KeyPair, opensslKeyPair, selfSignedCert } from '../../support/tools/signing.ts';

const controlPlaneDir = inject('controlPlaneDir');
const USER = { username: 'mirror', password: 'registry-pass-Hn27qW' };
const REPO = 'docs/site';

describe.runIf(controlPlaneDir)('inside the air gap, on the real node', () => {
  let registry: TestRegistry;
  let work: string;
  let ca: string;
  let signing: KeyPair;
  let stranger: KeyPair;
  let tag = '';
  // The simulator stands for the platform outside the gap; the operator inside reaches only the registry.
  const h = useOperatorSuite({
    namespaces: ['node-gap'],
    sim: { exportDurationMs: 0 },
    editableDocs: true,
    beforeStart: async () => {
      tag = await (await realNode()).pushProjectImage();
    },
  });

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'node-gap-'));
    const tls = await selfSignedCert(join(work, 'tls'), [`IP:${NODE_IP}`]);
    ca = await readFile(join(tls, 'cert.pem'), 'utf8');
    // Where pods reach it: the node's address.
    registry = await startRegistry({
      host: NODE_IP,
      user: USER,
      tls: { certFile: join(tls, 'cert.pem'), keyFile: join(tls, 'key.pem') },
    });
    signing = await opensslKeyPair(work, 'signing');
    stranger = await opensslKeyPair(work, 'stranger');
    const auth = Buffer.from(`${USER.username}:${USER.password}`).toString('base64');
    const secrets = [
      {
        metadata: { name: 'registry-login' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry.host]: { auth } } }) },
      },
      { metadata: { name: 'registry-ca' }, stringData: { 'ca.crt': ca } },
      { metadata: { name: 'site-signing' }, stringData: { 'cosign.pub': signing.public } },
      { metadata: { name: 'stranger-signing' }, stringData: { 'cosign.pub': stranger.public } },
    ];
    for (const s of secrets)
      await kubectlOk(
        ['apply', '-n', h.ns, '-f', '-'],
        stringify({ apiVersion: 'v1', kind: 'Secret', ...s }),
      );
  }, REAL_NODE_START_TIMEOUT_MS);

  afterAll(async () => {
    await registry?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** Outside: the platform's export saved as an archive; inside: loaded, signed, tagged latest. */
  async function carryIn(label: string): Promise<string> {
    const bundle = await exportBundle(h.sim, 'docs.example.com');
    const archive = join(work, `${label}.tar`);
    const saved = await runCli([
      'mirror',
      'save',
      '--url',
      bundle.bundleUrl,
      '--domain',
      'docs.example.com',
      '--to',
      archive,
      '--json',
    ]);
    expect(saved.code, saved.stdout + saved.stderr).toBe(0);
    const loaded = await runCli(
      [
        'mirror',
        'load',
        archive,
        '--to',
        `oci://${registry.host}/${REPO}`,
        '--tag',
        'latest',
        '--sign-key',
        signing.privateFile,
        '--ca-file',
        join(work, 'tls', 'cert.pem'),
        '--username',
        USER.username,
        '--json',
      ],
      { STATIC_EXPORT_REGISTRY_PASSWORD: USER.password },
    );
    expect(loaded.code, loaded.stdout + loaded.stderr).toBe(0);
    const digest = jsonEvents(loaded.stdout, 'loaded')[0]?.digest;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    return String(digest);
  }

  const ociValues = (publicKeySecret: string) => ({
    staticExport: {
      enabled: true,
      existingSecret: 'docs-values',
      oci: { credentialsSecret: 'registry-login', caSecret: 'registry-ca', publicKeySecret },
    },
    image: { tag },
    nginx: { image: { tag: 'offline' } },
    replicaCount: 1,
    ...ON_REAL_NODE,
  });

  it(
    'serves the signed site image the pods pulled from the internal registry, and follows a new version',
    async () => {
      const first = await carryIn('first');
      await kubectlOk(
        ['apply', '-f', '-'],
        stringify({
          apiVersion: 'staticexport.dev/v1alpha1',
          kind: 'StaticExportRelease',
          metadata: { name: 'docs', namespace: h.ns },
          spec: {
            source: {
              oci: {
                repository: `${registry.host}/${REPO}`,
                credentialsSecretRef: { name: 'registry-login' },
                caSecretRef: { name: 'registry-ca' },
                verify: { publicKeySecretRef: { name: 'site-signing' } },
                interval: '10s',
              },
            },
            target: { valuesSecret: { name: 'docs-values' } },
          },
        }),
      );
      const published = await eventually('docs Ready with the image published', async () => {
        const r: StaticExportRelease = await getRelease(h.ns, 'docs');
        return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? r : undefined;
      });
      expect(JSON.stringify(published.status)).toContain(first);

      const installed = await helmInstall('helm4', {
        release: 'docs',
        chart: CHART_DIR,
        namespace: h.ns,
        extra: ['--wait', '--timeout', '180s'],
        values: ociValues('site-signing'),
      });
      expect(installed.code, installed.stderr).toBe(0);
      const svc = JSON.parse(
        await kubectlOk(['get', 'service', 'docs-static-export-site', '-n', h.ns, '-o', 'json']),
      ) as { spec: { clusterIP: string; ports: { port: number }[] } };
      const base = `http://${svc.spec.clusterIP}:${svc.spec.ports[0]?.port}`;
      const [pod] = await sitePods(h.ns, 'docs');
      expect(pod).toBeDefined();
      const log = await kubectlOk(['logs', pod?.metadata.name ?? '', '-n', h.ns, '-c', 'fetch']);
      // The pod pulled the image by its digest and checked its signature before extracting it.
      expect(log).toContain(first);
      expect(log).toContain('(signature verified)');
      expect(log).not.toContain(USER.password);
      // A new Service answers once kube-proxy has programmed it.
      await eventually('the Service answers', async () =>
        (await statusOf(`${base}/getting-started`)) === 200 ? true : undefined,
      );
      expect(await statusOf(`${base}/carried-in`)).toBe(404);

      // A new version carried in: the operator publishes its digest and rolls; the pods pull it.
      writeFileSync(join(h.docsDir, 'carried-in.md'), '# Carried in\n\nA second version.\n');
      const second = await carryIn('second');
      expect(second).not.toBe(first);
      await eventually(
        'the second version served through the Service',
        async () => ((await statusOf(`${base}/carried-in`)) === 200 ? true : undefined),
        180_000,
      );
    },
    REAL_NODE_START_TIMEOUT_MS,
  );

  it('refuses the image in a pod given another public key, and the site keeps serving', async () => {
    const installed = await helmInstall('helm4', {
      release: 'stranger',
      chart: CHART_DIR,
      namespace: h.ns,
      values: ociValues('stranger-signing'),
    });
    expect(installed.code, installed.stderr).toBe(0);
    const refused = await eventually(
      "the stranger pod's fetch refused the signature",
      () => refusedPod(h.ns, 'stranger', /signature/i),
      120_000,
    );
    expect(refused.log).not.toContain(USER.password);
    expect((await sitePods(h.ns, 'docs')).filter(podReady).length).toBe(1);
  }, 180_000);
});
