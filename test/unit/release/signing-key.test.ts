// The signing key is checked before anything is built: a missing file or an unset variable is one
// line naming what to do.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { assertSigningKey } from '../../../scripts/release/cosign.ts';

const dir = mkdtempSync(join(tmpdir(), 'release-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('accepts a key file that exists and an env:// variable that is set', () => {
  writeFileSync(join(dir, 'cosign.key'), 'key');
  expect(() => assertSigningKey(join(dir, 'cosign.key'))).not.toThrow();
  process.env.RELEASE_TEST_KEY = 'key';
  try {
    expect(() => assertSigningKey('env://RELEASE_TEST_KEY')).not.toThrow();
  } finally {
    delete process.env.RELEASE_TEST_KEY;
  }
});

it('refuses a key file that does not exist, saying how to make one', () => {
  expect(() => assertSigningKey(join(dir, 'missing.key'))).toThrow(
    `--sign-key ${join(dir, 'missing.key')}: no such file; make a key pair with \`cosign generate-key-pair\` or name yours`,
  );
});

it('refuses an env:// variable that is not set, naming it', () => {
  expect(() => assertSigningKey('env://RELEASE_TEST_UNSET_KEY')).toThrow(
    '--sign-key env://RELEASE_TEST_UNSET_KEY: RELEASE_TEST_UNSET_KEY is not set; export the private key in it',
  );
});
