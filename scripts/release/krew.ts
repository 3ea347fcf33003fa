// The kubectl plugin as krew installs it: the single executable archived as `kubectl-static_export`
// (kubectl runs `kubectl-static_export` on the PATH for `kubectl static-export`), and the plugin
// manifest naming that archive's download URL and sha256 (krew's Plugin, v1alpha2:
// https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest).
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { create } from 'tar';
import { stringify } from 'yaml';
import { z } from 'zod';

export const PLUGIN_NAME = 'static-export';
/** What kubectl looks for on the PATH: dashes in the plugin's name become underscores. */
export const PLUGIN_BIN = 'kubectl-static_export';
/** Where a release's files are attached (the GitHub release of tag v<version>). */
export const RELEASE_DOWNLOADS =
  'https://github.com/static-export-operator/static-export-operator/releases/download';

/** Krew's arch labels are Go's (GOARCH); where Node names an architecture otherwise. */
const GOARCH: Partial<Record<NodeJS.Architecture, string>> = { x64: 'amd64', ia32: '386', ppc64: 'ppc64le' };

const KrewPlatform = z.strictObject({
  selector: z.strictObject({
    matchLabels: z.strictObject({ os: z.string().min(1), arch: z.string().min(1) }),
  }),
  uri: z.url({ protocol: /^https$/ }),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the archive’s sha256, 64 lowercase hex digits'),
  bin: z.string().min(1),
  files: z.array(z.strictObject({ from: z.string().min(1), to: z.string().min(1) })).min(1),
});

export const KrewPlugin = z.strictObject({
  apiVersion: z.literal('krew.googlecontainertools.github.com/v1alpha2'),
  kind: z.literal('Plugin'),
  // The manifest's file is <name>.yaml; krew refuses names with a kubectl- prefix or underscores.
  metadata: z.strictObject({ name: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/) }),
  spec: z.strictObject({
    // Semantic version with krew's required v prefix.
    version: z.string().regex(/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/),
    homepage: z.url(),
    shortDescription: z.string().min(1),
    description: z.string().min(1),
    platforms: z.array(KrewPlatform).min(1),
  }),
});
export type KrewPlugin = z.infer<typeof KrewPlugin>;

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * Archives the single executable `executable` (built for this platform) as `<executable>.tar.gz`
 * beside it, holding `kubectl-static_export` and the LICENSE; writes `<outDir>/plugins/static-export.yaml`
 * naming it. Returns both paths.
 */
export async function writeKrewPlugin(
  root: string,
  version: string,
  executable: string,
  outDir: string,
): Promise<{ archive: string; manifest: string }> {
  const arch = GOARCH[process.arch] ?? process.arch;
  const archive = `${executable}.tar.gz`;
  const stage = mkdtempSync(join(tmpdir(), 'static-export-krew-'));
  try {
    copyFileSync(executable, join(stage, PLUGIN_BIN));
    copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
    await create({ gzip: true, file: archive, cwd: stage, portable: true }, [PLUGIN_BIN, 'LICENSE']);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const plugin: KrewPlugin = KrewPlugin.parse({
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: PLUGIN_NAME },
    spec: {
      version: `v${version}`,
      homepage: 'https://github.com/static-export-operator/static-export-operator',
      shortDescription: 'Self-hosted docs sites from static exports',
      description:
        'The static-export CLI as a kubectl plugin: the status of StaticExportReleases, a check of the operator and its CRDs, exports, fetches and air-gap mirrors of docs sites.\n',
      platforms: [
        {
          selector: { matchLabels: { os: process.platform, arch } },
          uri: `${RELEASE_DOWNLOADS}/v${version}/${basename(archive)}`,
          sha256: sha256(archive),
          bin: PLUGIN_BIN,
          files: [
            { from: PLUGIN_BIN, to: '.' },
            { from: 'LICENSE', to: '.' },
          ],
        },
      ],
    },
  });
  mkdirSync(join(outDir, 'plugins'), { recursive: true });
  const manifest = join(outDir, 'plugins', `${PLUGIN_NAME}.yaml`);
  writeFileSync(manifest, stringify(plugin));
  return { archive, manifest };
}
