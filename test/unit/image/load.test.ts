// scripts/image/load.sh, which `npm run image -- --load TARGET` ends with: the command each local
// cluster documents for loading an image archive, and the errors a user gets instead of a stack of
// shell output. kind, k3d and minikube do not run here: stand-ins on the PATH record how they are
// called (the containerd import runs for real on the node: test/integration/node/image-load.test.ts).
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cluster/kube.ts';
import { tempDir } from '../../support/temp.ts';

const LOAD = join(ROOT, 'scripts', 'image', 'load.sh');
const BUILD = join(ROOT, 'scripts', 'image', 'build.sh');
const ARCHIVE = '/work/.image/static-export-0.1.0.tar';

/** A PATH with bash and, for each name, a program that writes its arguments to <name>.args. */
function pathWith(...programs: string[]): string {
  const bin = tempDir('load-path-');
  symlinkSync(spawnSync('sh', ['-c', 'command -v bash']).stdout.toString().trim(), join(bin, 'bash'));
  for (const name of programs) {
    writeFileSync(join(bin, name), `#!/bin/sh\nprintf "%s\\n" "$*" > "${join(bin, `${name}.args`)}"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

function load(path: string, ...args: string[]) {
  const r = spawnSync(LOAD, args, { env: { PATH: path }, encoding: 'utf8' });
  return { code: r.status, stderr: r.stderr };
}

describe('npm run image -- --load', () => {
  it.each([
    ['kind', 'kind', `load image-archive ${ARCHIVE}`],
    ['k3d', 'k3d', `image import ${ARCHIVE}`],
    ['minikube', 'minikube', `image load ${ARCHIVE}`],
    ['containerd', 'ctr', `-n k8s.io images import ${ARCHIVE}`],
  ])('%s: runs %s with the archive', (target, program, args) => {
    const bin = pathWith(program);
    const r = load(bin, target, ARCHIVE);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(bin, `${program}.args`), 'utf8').trim()).toBe(args);
    expect(r.stderr).toContain(`image: loaded into ${target} from ${ARCHIVE}`);
  });

  it('containerd: --address names the socket ctr dials', () => {
    const bin = pathWith('ctr');
    expect(load(bin, 'containerd', ARCHIVE, '/run/k3s/containerd/containerd.sock').code).toBe(0);
    expect(readFileSync(join(bin, 'ctr.args'), 'utf8').trim()).toBe(
      `--address /run/k3s/containerd/containerd.sock -n k8s.io images import ${ARCHIVE}`,
    );
  });

  it('names the missing program, the archive and the command to load it by hand', () => {
    const r = load(pathWith(), 'kind', ARCHIVE);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `image: kind is not on the PATH; the image is in ${ARCHIVE}, load it by hand: kind load image-archive ${ARCHIVE}`,
    );
  });

  it('says where the archive is when the loading command fails', () => {
    const bin = pathWith();
    writeFileSync(join(bin, 'minikube'), '#!/bin/sh\necho "no cluster" >&2; exit 3\n');
    chmodSync(join(bin, 'minikube'), 0o755);
    const r = load(bin, 'minikube', ARCHIVE);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no cluster');
    expect(r.stderr).toContain(
      `image: loading failed; the image is in ${ARCHIVE} (minikube image load ${ARCHIVE})`,
    );
  });

  // build.sh checks --load and --address before the minutes a build takes.
  it.each([
    [['--load', 'docker'], "image: --load takes kind, k3d, minikube or containerd (got 'docker')"],
    [
      ['--load', 'kind', '--address', '/run/x.sock'],
      'image: --address names a containerd socket: use it with --load containerd only',
    ],
    [
      ['--address', '/run/x.sock'],
      'image: --address names a containerd socket: use it with --load containerd only',
    ],
    [['--push'], 'image: unknown option --push'],
  ])('build.sh %j fails before building', (args, message) => {
    const r = spawnSync(BUILD, args, { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
