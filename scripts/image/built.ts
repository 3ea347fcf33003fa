// The container image as built by `npm run image`, cached outside the repo by a hash of its inputs
// (like the control plane): pushed to the real node's registry, or unpacked by the tests with umoci
// into a root filesystem they chroot into.
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** What the image is built from: the Dockerfile's build context and the offline base's recipe. */
const INPUTS = [
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'crds',
  'sample-docs',
  'scripts/image',
];

/** Why the image cannot be built on this machine, or undefined when it can. */
export function imageToolsMissing(): string | undefined {
  if (process.platform !== 'linux') return 'building and unpacking the image needs Linux';
  if (process.getuid?.() !== 0) return 'buildah (chroot isolation), umoci and chroot need root here';
  const missing = ['buildah', 'umoci', 'chroot', 'busybox'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
  );
  if (missing.length > 0) {
    return `${missing.join(', ')} not installed (Debian: apt-get install buildah umoci busybox-static; .ci/run does)`;
  }
  return undefined;
}

function inputsHash(): string {
  const hash = createHash('sha256');
  const add = (rel: string) => {
    const path = join(ROOT, rel);
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) add(join(rel, name));
      return;
    }
    hash.update(`${rel}\0`).update(readFileSync(path));
  };
  for (const input of INPUTS) add(input);
  // The base's Node binary comes from node_modules/node.
  hash.update(spawnSync(join(ROOT, 'node_modules', 'node', 'bin', 'node'), ['--version']).stdout);
  return hash.digest('hex').slice(0, 16);
}

export interface BuiltImage {
  /** OCI image layout directory; the image's tag is the package version. */
  layout: string;
  tag: string;
  /** Seconds the build took, when this call built it (undefined: from the cache). */
  builtInSeconds?: number;
}

/** The OCI layout of the current sources' image, built by `scripts/image/build.sh` when not cached. */
export async function builtImage(): Promise<BuiltImage> {
  const cache = process.env.STATIC_EXPORT_CACHE ?? join(homedir(), '.cache', 'static-export-operator');
  const dir = join(cache, 'image', inputsHash());
  const layout = join(dir, 'oci');
  const tag = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  if (existsSync(join(layout, 'index.json'))) return { layout, tag };
  const started = process.hrtime.bigint();
  const partial = join(dir, 'oci.partial');
  rmSync(partial, { recursive: true, force: true });
  await promisify(execFile)(join(ROOT, 'scripts', 'image', 'build.sh'), [partial], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  renameSync(partial, layout);
  // One image per cache: the previous sources' images go (each is about 60 MB).
  for (const old of readdirSync(join(cache, 'image'))) {
    if (join(cache, 'image', old) !== dir)
      rmSync(join(cache, 'image', old), { recursive: true, force: true });
  }
  return { layout, tag, builtInSeconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
