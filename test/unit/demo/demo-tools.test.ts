// `npm run demo` checks the tools of the path it takes before its first build (a missing nginx
// used to surface after a 10-minute build, and crash past the clean-up).
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { installed, missingTools } from '../../../scripts/demo-tools.ts';
import { NGINX } from '../../../scripts/site-local.ts';
import { ROOT } from '../../support/cluster/kube.ts';
import { tempDir } from '../../support/temp.ts';

function bin(names: string[]): string {
  const dir = tempDir('demo-path-');
  for (const name of names) {
    writeFileSync(join(dir, name), '#!/bin/sh\n');
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

it('names what the real-node path lacks and the Debian packages that install it', () => {
  expect(missingTools(true, bin(['openssl', 'skopeo']))).toBe(
    'the demo with a real node needs buildah, busybox, not installed (Debian: apt-get install buildah busybox-static)',
  );
  expect(missingTools(true, bin(['openssl', 'buildah', 'busybox', 'skopeo']))).toBeUndefined();
});

it('takes an executable file only', () => {
  const dir = bin(['go']);
  writeFileSync(join(dir, 'plain'), '');
  expect(installed('go', dir)).toBe(true);
  expect(installed('plain', dir)).toBe(false);
  expect(installed(join(dir, 'go'), '')).toBe(true);
});

it('exits at once, before starting a control plane, when the path without a node lacks a tool', async () => {
  const r = await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/demo.ts'), '--kwok'], {
    env: { PATH: bin([]), HOME: tempDir('demo-home-') },
  }).then(
    () => ({ code: 0, stdout: '', stderr: '' }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  expect(r.code).toBe(1);
  const nginx = existsSync(NGINX) ? '' : `, ${NGINX}`;
  expect(r.stderr).toBe(
    `demo: the demo without a real node (the site runs on this machine) needs openssl${nginx}, not installed (Debian: apt-get install openssl${nginx ? ' nginx' : ''}).\n`,
  );
  expect(r.stdout).not.toContain('control plane');
});
