// `npm run release` end to end against a local Distribution registry, as docs/release.md tells a
// maintainer and a user: the release publishes; both charts install from oci:// on the control plane
// (kwok runs their pods) and point at the image released beside them; cosign checks every signature
// with the public key and refuses a tampered file; the single executable runs `--version` and
// `fetch` from the simulator with no `node` on its PATH.
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { imageToolsMissing } from '../../scripts/image/built.ts';
import { executableName } from '../../scripts/release/executable.ts';
import { KrewPlugin } from '../../scripts/release/krew.ts';
import { runProcess } from '../../scripts/run-process.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import {
  createNamespace,
  hasAdmissionPolicies,
  installCrds,
  KUBECTL,
  kubeconfig,
  kubectlOk,
} from '../support/cluster/kube.ts';
import { startRegistry, type TestRegistry } from '../support/servers/registry.ts';
import { exportBundle } from '../support/servers/sim-export.ts';
import { helm, ROOT } from '../support/tools/chart.ts';
import { goTool } from '../support/tools/go-tools.ts';
import { runRelease } from '../support/tools/run-release.ts';
import { cosignVerify, runCosign } from '../support/tools/signing.ts';

const missing = imageToolsMissing();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TARBALL = `static-export-operator-${VERSION}.tgz`;
const EXECUTABLE = executableName(VERSION);
const PLUGIN_ARCHIVE = `${EXECUTABLE}.tar.gz`;
const PLUGIN_MANIFEST = 'plugins/static-export.yaml';
const CHARTS = ['static-export-operator', 'static-export-site', 'static-export-simulator'].map(
  (c) => `charts/${c}-${VERSION}.tgz`,
);
const IMAGES = `static-export-${VERSION}-images.txt`;

let registry: TestRegistry;
let work: string;
let out: string;
let cosign: string;
let repository: string;

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry();
  repository = `${registry.host}/static-export`;
  work = mkdtempSync(join(tmpdir(), 'release-e2e-'));
  out = join(work, 'out');
  cosign = await goTool('cosign');
  // The maintainer's key pair, as docs/release.md makes it.
  const made = await runCosign(cosign, work, ['generate-key-pair'], { COSIGN_PASSWORD: '' });
  expect(made.code, made.stderr).toBe(0);
  const released = await runRelease(
    ['--to', `oci://${repository}`, '--sign-key', join(work, 'cosign.key'), '--out', out, '--plain-http'],
    { HOME: work, COSIGN: cosign, COSIGN_PASSWORD: '' },
  );
  expect(released.code, released.stderr).toBe(0);
}, 20 * 60_000);

afterAll(async () => {
  await registry?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('npm run release to a local registry', () => {
  it('writes the npm tarball, the single executable, the kubectl plugin, the chart packages, the image list, SHA256SUMS and a signature of each', async ({
    skip,
  }) => {
    if (missing) return skip(missing);
    const files = [TARBALL, EXECUTABLE, PLUGIN_ARCHIVE, PLUGIN_MANIFEST, ...CHARTS, IMAGES, 'SHA256SUMS'];
    for (const file of files) {
      expect(existsSync(join(out, file)), file).toBe(true);
      expect(existsSync(join(out, `${file}.sig`)), `${file}.sig`).toBe(true);
    }
    const withSignatures = (names: string[]) => names.flatMap((f) => [f, `${f}.sig`]).sort();
    expect(readdirSync(out).sort()).toEqual(
      [
        ...withSignatures([TARBALL, EXECUTABLE, PLUGIN_ARCHIVE, IMAGES, 'SHA256SUMS']),
        'charts',
        'plugins',
      ].sort(),
    );
    expect(readdirSync(join(out, 'plugins')).sort()).toEqual(withSignatures(['static-export.yaml']));
    expect(readdirSync(join(out, 'charts')).sort()).toEqual(
      withSignatures(CHARTS.map((c) => c.slice('charts/'.length))),
    );
    const sums = await runProcess('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    expect(sums.code, sums.stderr).toBe(0);
    expect(sums.stdout.trim().split('\n').sort()).toEqual(
      [TARBALL, EXECUTABLE, PLUGIN_ARCHIVE, PLUGIN_MANIFEST, ...CHARTS, IMAGES].map((f) => `${f}: OK`).sort(),
    );
    // What an air gap needs: the image released beside the charts and the charts' others.
    expect(readFileSync(join(out, IMAGES), 'utf8').trim().split('\n')).toContain(
      `${repository}/static-export:${VERSION}`,
    );
  });

  it('the krew manifest is a valid Plugin naming the archive by its sha256, and kubectl runs the plugin in it', async ({
    skip,
  }) => {
    if (missing) return skip(missing);
    const manifest = KrewPlugin.parse(parse(readFileSync(join(out, PLUGIN_MANIFEST), 'utf8')));
    expect(manifest.metadata.name).toBe('static-export');
    expect(manifest.spec.version).toBe(`v${VERSION}`);
    const [platform] = manifest.spec.platforms;
    expect(platform?.selector.matchLabels).toEqual({
      os: 'linux',
      arch: process.arch === 'x64' ? 'amd64' : 'arm64',
    });
    expect(platform?.uri).toBe(
      `https://github.com/static-export-operator/static-export-operator/releases/download/v${VERSION}/${PLUGIN_ARCHIVE}`,
    );
    const archive = readFileSync(join(out, PLUGIN_ARCHIVE));
    expect(platform?.sha256).toBe(createHash('sha256').update(archive).digest('hex'));
    // What krew does with it: unpack, put `bin` on the PATH; the real kubectl then finds the plugin.
    const pluginDir = mkdtempSync(join(work, 'krew-'));
    const unpacked = await runProcess('tar', ['-xzf', join(out, PLUGIN_ARCHIVE), '-C', pluginDir]);
    expect(unpacked.code, unpacked.stderr).toBe(0);
    expect(readdirSync(pluginDir).sort()).toEqual(['LICENSE', platform?.bin].sort());
    const env = { PATH: pluginDir, HOME: work, KUBECONFIG: kubeconfig() };
    const listed = await runProcess(KUBECTL, ['plugin', 'list', '--name-only'], { cwd: work, env });
    expect(listed.stdout).toMatch(/^kubectl-static_export$/m);
    const version = await runProcess(KUBECTL, ['static-export', '--version'], { cwd: work, env });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toBe(`${VERSION}\n`);
  });

  it('the three charts install from oci:// and run the image released beside them', async ({ skip }) => {
    if (missing) return skip(missing);
    // CRDs applied as the README's kubectl path does: other suites share this control plane's CRDs.
    await installCrds();
    const ns = await createNamespace('release');
    const install = (release: string, chart: string, set: string[]) =>
      helm('helm4', [
        'install',
        release,
        `oci://${repository}/${chart}`,
        '--version',
        VERSION,
        '--plain-http',
        '--kubeconfig',
        kubeconfig(),
        '--namespace',
        ns,
        ...set.flatMap((s) => ['--set', s]),
      ]);
    const operator = await install('released-operator', 'static-export-operator', [
      'crds.enabled=false',
      'operator.apiBaseUrl=https://api.example.com',
      // Below Kubernetes 1.30 (CI's oldest-Kubernetes step) the chart refuses its admission policies.
      ...((await hasAdmissionPolicies()) ? [] : ['admissionPolicy.enabled=false']),
    ]);
    expect(operator.code, operator.stderr).toBe(0);
    const site = await install('released-site', 'static-export-site', [
      'staticExport.enabled=true',
      'staticExport.existingSecret=docs-site-values',
    ]);
    expect(site.code, site.stderr).toBe(0);
    const simulator = await install('released-simulator', 'static-export-simulator', []);
    expect(simulator.code, simulator.stderr).toBe(0);

    const images = JSON.parse(await kubectlOk(['-n', ns, 'get', 'deployments', '-o', 'json'])) as {
      items: {
        metadata: { name: string };
        spec: {
          template: { spec: { containers: { image: string }[]; initContainers?: { image: string }[] } };
        };
      }[];
    };
    const released = `${repository}/static-export:${VERSION}`;
    const byName = Object.fromEntries(
      images.items.map((d) => [
        d.metadata.name,
        [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers].map(
          (c) => c.image,
        ),
      ]),
    );
    expect(Object.keys(byName).sort()).toEqual(
      [
        'released-operator-static-export-operator',
        'released-site-static-export-site',
        'released-simulator-static-export-simulator',
      ].sort(),
    );
    expect(byName['released-simulator-static-export-simulator']).toEqual([released]);
    expect(byName['released-operator-static-export-operator']).toEqual([released]);
    expect(byName['released-site-static-export-site']).toContain(released);
  });

  it('cosign verify --key checks the image and the charts; another key is refused', async ({ skip }) => {
    if (missing) return skip(missing);
    const other = mkdtempSync(join(work, 'other-key-'));
    const made = await runCosign(cosign, other, ['generate-key-pair'], { COSIGN_PASSWORD: '' });
    expect(made.code, made.stderr).toBe(0);
    for (const artifact of [
      'static-export',
      'static-export-operator',
      'static-export-site',
      'static-export-simulator',
    ]) {
      const reference = `${repository}/${artifact}:${VERSION}`;
      const verified = await cosignVerify(cosign, work, join(work, 'cosign.pub'), reference);
      expect(verified.code, `${reference}: ${verified.stderr}`).toBe(0);
      const refused = await cosignVerify(cosign, work, join(other, 'cosign.pub'), reference);
      expect(refused.code, reference).not.toBe(0);
      expect(refused.stderr).toMatch(/no matching signatures/i);
    }
  });

  it('cosign verify-blob checks the tarball, the executable and SHA256SUMS, and refuses each tampered', async ({
    skip,
  }) => {
    if (missing) return skip(missing);
    const tampered = mkdtempSync(join(work, 'tampered-'));
    const verifyBlob = (file: string, signature: string) =>
      runCosign(cosign, work, [
        'verify-blob',
        '--key',
        join(work, 'cosign.pub'),
        '--private-infrastructure',
        '--signature',
        signature,
        file,
      ]);
    for (const file of [TARBALL, EXECUTABLE, 'SHA256SUMS']) {
      const verified = await verifyBlob(join(out, file), join(out, `${file}.sig`));
      expect(verified.code, `${file}: ${verified.stderr}`).toBe(0);
      const copy = join(tampered, file);
      copyFileSync(join(out, file), copy);
      appendFileSync(copy, '\n');
      const refused = await verifyBlob(copy, join(out, `${file}.sig`));
      expect(refused.code, file).not.toBe(0);
      expect(refused.stderr).toMatch(/invalid signature/i);
    }
  });

  describe('the single executable, with no node on its PATH', () => {
    let sim: Simulator;
    let emptyPath: string;
    beforeAll(async () => {
      if (missing) return;
      sim = await startSimulator({ exportDurationMs: 100 });
      emptyPath = mkdtempSync(join(work, 'path-'));
    });
    afterAll(() => sim?.close());

    const runExecutable = (args: string[], env: Record<string, string> = {}) =>
      runProcess(join(out, EXECUTABLE), args, { cwd: work, env: { PATH: emptyPath, HOME: work, ...env } });

    it("prints package.json's version", async ({ skip }) => {
      if (missing) return skip(missing);
      expect(readdirSync(emptyPath)).toEqual([]);
      const version = await runExecutable(['--version']);
      expect(version.code, version.stderr).toBe(0);
      expect(version.stdout).toBe(`${VERSION}\n`);
    });

    it('fetches, verifies and extracts a bundle from the simulator over loopback', async ({ skip }) => {
      if (missing) return skip(missing);
      const bundle = await exportBundle(sim);
      const dest = join(work, 'site');
      const fetched = await runExecutable(['fetch', '--dest', dest], {
        STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
      });
      expect(fetched.code, fetched.stderr).toBe(0);
      expect(readFileSync(join(dest, 'index.html'), 'utf8')).toMatch(/<html/i);
      // The link is a bearer credential: its signature is never printed.
      const sig = new URL(bundle.bundleUrl).searchParams.get('sig');
      expect(sig).toBeTruthy();
      expect(fetched.stdout + fetched.stderr).not.toContain(sig);
    });
  });
});
