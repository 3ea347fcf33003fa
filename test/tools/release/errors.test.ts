// `npm run release` refuses before building anything, in one line naming the fix: no signing key,
// a registry that does not answer (with real cosign, helm and skopeo found, so only the registry is
// missing).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/servers/registry.ts';
import { goTool } from '../../support/tools/go-tools.ts';
import { runRelease } from '../../support/tools/run-release.ts';
import { runCosign } from '../../support/tools/signing.ts';

let work: string;
let env: Record<string, string>;
let key: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'release-errors-'));
  const cosign = await goTool('cosign');
  const made = await runCosign(cosign, work, ['generate-key-pair'], { COSIGN_PASSWORD: '' });
  expect(made.code, made.stderr).toBe(0);
  key = join(work, 'cosign.key');
  env = { HOME: work, COSIGN: cosign, COSIGN_PASSWORD: '' };
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run release refuses in one line', () => {
  it('without a signing key: how to make one', async () => {
    const result = await runRelease(['--to', 'oci://ghcr.io/static-export-operator'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'release: no signing key: pass --sign-key cosign.key (make one with `cosign generate-key-pair`) or --sign-key env://COSIGN_PRIVATE_KEY\n',
    );
  });

  it('when the registry does not answer: start it or fix --to; nothing is built', async () => {
    const host = `127.0.0.1:${await freePort()}`;
    const out = join(work, 'out');
    const args = ['--to', `oci://${host}/static-export`, '--sign-key', key, '--out', out];
    const plain = await runRelease([...args, '--plain-http'], env);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toBe(
      `release: registry ${host} is unreachable (ECONNREFUSED): start it or fix the host in --to\n`,
    );
    const tls = await runRelease(args, env);
    expect(tls.code).toBe(1);
    expect(tls.stderr).toBe(
      `release: registry ${host} is unreachable (ECONNREFUSED): start it or fix the host in --to (a registry serving plain http needs --plain-http)\n`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('when --out holds anything but an earlier release: name another directory; nothing is removed', async () => {
    const host = `127.0.0.1:${await freePort()}`;
    const result = await runRelease(
      ['--to', `oci://${host}/static-export`, '--sign-key', key, '--out', work, '--plain-http'],
      env,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `release: --out ${work} holds files of no earlier release; name a new or empty directory\n`,
    );
    expect(existsSync(key)).toBe(true);
  });

  it('without cosign: where to get it', async () => {
    const result = await runRelease(['--to', 'oci://ghcr.io/static-export-operator', '--sign-key', key], {
      ...env,
      COSIGN: join(work, 'no-cosign'),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'release: cosign not found: install cosign v2 (https://docs.sigstore.dev/cosign/system_config/installation/) or set COSIGN to its path\n',
    );
  });
});
