// The build scripts refuse a Go toolchain older than the modules they build declare, at once and
// saying which Go is needed, instead of failing minutes into a build (Debian 12's golang-go is 1.19).
// A `go` that prints a version stands in for an old toolchain, which this machine does not have.
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from '../../support/cluster/kube.ts';
import { tempDir } from '../../support/temp.ts';

/** A PATH whose `go` says it is `version`, then the system's tools. */
function pathWithGo(version: string): string {
  const dir = tempDir('old-go-');
  writeFileSync(
    join(dir, 'go'),
    `#!/bin/sh\n[ "$1" = version ] && echo "go version ${version} linux/amd64"\nexit 0\n`,
  );
  chmodSync(join(dir, 'go'), 0o755);
  return `${dir}:/usr/local/bin:/usr/bin:/bin`;
}

async function run(script: string, args: string[], path: string) {
  return promisify(execFile)('bash', [join(ROOT, script), ...args], {
    env: { PATH: path, HOME: tempDir('go-home-'), STATIC_EXPORT_CACHE: tempDir('go-cache-') },
  }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );
}

it.each([
  ['scripts/control-plane/build.sh', [], 'the control plane'],
  ['scripts/go-tools/build.sh', ['registry'], 'registry'],
])('%s refuses Go 1.19 before building anything, naming the minimum', async (script, args, what) => {
  const r = await run(script, args, pathWithGo('go1.19.8'));
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    `build.sh: go 1.19 is too old to build ${what}: Go 1.26 or later is required (Debian 12's golang-go is 1.19; install a current release from https://go.dev/dl/ and put its bin first on the PATH)\n`,
  );
});

it('takes the minimum and newer versions', async () => {
  const check = (version: string) =>
    promisify(execFile)(
      'bash',
      // --norc: bash reads ~/.bashrc when it takes its stdin for a remote shell's, which may put another go first.
      ['--norc', '-c', `source ${join(ROOT, 'scripts/go-version.sh')}; require_go x; echo ok`],
      {
        env: { PATH: pathWithGo(version) },
      },
    ).then(
      (r) => r.stdout,
      (e: { stderr: string }) => e.stderr,
    );
  expect(await check('go1.26.0')).toBe('ok\n');
  expect(await check('go1.27rc1')).toBe('ok\n');
  expect(await check('go2.0')).toBe('ok\n');
  expect(await check('go1.25.7')).toMatch(/go 1\.25 is too old to build x/);
});
