// `mirror push|load|sync --sign-key` through the real CLI against the simulator and a real
// Distribution registry, the signatures checked by the real cosign CLI and by verifyManifest.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryClient } from '../../../src/oci/registry.ts';
import { signatureTag, verifyManifest } from '../../../src/oci/sign.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { type MirrorStack, startMirrorStack } from '../../support/servers/mirror-stack.ts';
import { GO_TOOL_BUILD_TIMEOUT_MS, goTool, type TestRegistry } from '../../support/servers/registry.ts';
import { exportBundle } from '../../support/servers/sim-export.ts';
import { jsonEvents, runCli } from '../../support/tools/run-cli.ts';
import { cosignVerify, openssl, opensslKeyPair } from '../../support/tools/signing.ts';

let stack: MirrorStack | undefined;
let work: string;
let sim: Simulator;
let registry: TestRegistry;
let client: RegistryClient;
let cosign: string;
let keyFile: string;
let publicKey: string;
let publicKeyFile: string;
/** A line of the private key's body: must never show up in output. */
let keySecret: string;

beforeAll(async () => {
  cosign = await goTool('cosign');
  stack = await startMirrorStack('mirror-sign-test-');
  ({ work, sim, registry, client } = stack);
  const pair = await opensslKeyPair(work, 'site');
  keyFile = pair.privateFile;
  publicKeyFile = pair.publicFile;
  publicKey = pair.public;
  keySecret = pair.private.split('\n')[1] ?? '';
}, GO_TOOL_BUILD_TIMEOUT_MS);

afterAll(() => stack?.close());

// Each test runs the CLI several times (a process start is seconds on a busy machine).
const SLOW = { timeout: 240_000 };

async function cosignAccepts(reference: string): Promise<boolean> {
  return (await cosignVerify(cosign, work, publicKeyFile, reference)).code === 0;
}

function expectNoKey(result: { stdout: string; stderr: string }): void {
  expect(keySecret.length).toBeGreaterThan(20);
  expect(result.stdout + result.stderr).not.toContain(keySecret);
}

describe('mirror push --sign-key', SLOW, () => {
  it('signs the pushed version before tagging it, so cosign verify accepts the moving tag; once per key', async () => {
    const bundle = await exportBundle(sim, 'signed.example.com');
    const args = [
      'mirror',
      'push',
      '--to',
      `oci://${registry.host}/docs/signed`,
      '--domain',
      'signed.example.com',
      '--tag',
      'latest',
      '--sign-key',
      keyFile,
      '--json',
    ];
    const first = await runCli(args, { STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl });
    expect(first.code, first.stderr).toBe(0);
    expectNoKey(first);
    const [pushed] = jsonEvents(first.stdout, 'pushed');
    const digest = pushed?.digest as string;
    expect(jsonEvents(first.stdout, 'signed')).toEqual([
      {
        event: 'signed',
        registry: registry.host,
        repository: 'docs/signed',
        digest,
        outcome: 'signed',
        signatureDigest: (await client.resolve('docs/signed', signatureTag(digest)))?.digest,
      },
    ]);
    expect(await cosignAccepts(`${registry.host}/docs/signed:latest`)).toBe(true);
    expect((await verifyManifest(client, 'docs/signed', digest, publicKey)).valid).toBe(1);

    // The same version again: nothing pushed, the signature found, not doubled.
    const again = await runCli(args, {
      STATIC_EXPORT_BUNDLE_URL: (await exportBundle(sim, 'signed.example.com')).bundleUrl,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(jsonEvents(again.stdout, 'pushed')[0]).toMatchObject({ pushed: false, digest });
    expect(jsonEvents(again.stdout, 'signed')[0]).toMatchObject({ outcome: 'exists' });
    expect((await verifyManifest(client, 'docs/signed', digest, publicKey)).valid).toBe(1);
  });

  it('signs a version pushed earlier without a key when it is pushed again with one', async () => {
    const bundle = await exportBundle(sim, 'later.example.com');
    const to = `oci://${registry.host}/docs/later`;
    const base = ['mirror', 'push', '--to', to, '--domain', 'later.example.com', '--tag', 'latest', '--json'];
    const unsigned = await runCli(base, { STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl });
    expect(unsigned.code, unsigned.stderr).toBe(0);
    expect(jsonEvents(unsigned.stdout, 'signed')).toEqual([]);
    expect(await cosignAccepts(`${registry.host}/docs/later:latest`)).toBe(false);

    const signed = await runCli([...base, '--sign-key', keyFile], {
      STATIC_EXPORT_BUNDLE_URL: (await exportBundle(sim, 'later.example.com')).bundleUrl,
    });
    expect(signed.code, signed.stderr).toBe(0);
    expect(jsonEvents(signed.stdout, 'pushed')[0]).toMatchObject({ pushed: false });
    expect(jsonEvents(signed.stdout, 'signed')[0]).toMatchObject({ outcome: 'signed' });
    expect(await cosignAccepts(`${registry.host}/docs/later:latest`)).toBe(true);
  });

  it('refuses a key it cannot sign with (exit 2, naming --sign-key) before pushing anything', async () => {
    const rsaFile = join(work, 'rsa.key');
    await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', rsaFile]);
    const bundle = await exportBundle(sim, 'refused.example.com');
    const cases: [string, RegExp][] = [
      [rsaFile, /--sign-key: the key is not ECDSA P-256; write one with `openssl genpkey/],
      [join(work, 'absent.key'), /--sign-key .*absent\.key cannot be read \(ENOENT\)/],
      [publicKeyFile, /--sign-key: not a PEM private key/],
    ];
    for (const [file, message] of cases) {
      const result = await runCli(
        [
          'mirror',
          'push',
          '--to',
          `oci://${registry.host}/docs/refused`,
          '--domain',
          'refused.example.com',
          '--sign-key',
          file,
        ],
        { STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl },
      );
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(message);
      const rsaBody = (await readFile(rsaFile, 'utf8')).split('\n')[1] ?? '';
      expect(result.stderr).not.toContain(rsaBody);
    }
    expect(await client.listTags('docs/refused')).toEqual([]);
  });
});

describe('mirror load --sign-key', SLOW, () => {
  it('signs what it loads into the registry inside the gap', async () => {
    const bundle = await exportBundle(sim, 'carried.example.com');
    const archive = join(work, 'carried.tar');
    const saved = await runCli(['mirror', 'save', '--to', archive, '--domain', 'carried.example.com'], {
      STATIC_EXPORT_BUNDLE_URL: bundle.bundleUrl,
    });
    expect(saved.code, saved.stderr).toBe(0);
    const loaded = await runCli([
      'mirror',
      'load',
      archive,
      '--to',
      `oci://${registry.host}/inside/carried:latest`,
      '--sign-key',
      keyFile,
      '--json',
    ]);
    expect(loaded.code, loaded.stderr).toBe(0);
    expectNoKey(loaded);
    expect(jsonEvents(loaded.stdout, 'signed')[0]).toMatchObject({ outcome: 'signed' });
    expect(await cosignAccepts(`${registry.host}/inside/carried:latest`)).toBe(true);
  });
});

describe('mirror sync --sign-key', SLOW, () => {
  it('signs every domain, and finds the signatures on an unchanged run', async () => {
    const config = join(work, 'mirror.yaml');
    await writeFile(
      config,
      `target: oci://${registry.host}/synced\ndomains: [one.example.com, two.example.com]\n`,
    );
    const env = { STATIC_EXPORT_API_URL: sim.baseUrl, STATIC_EXPORT_API_KEY: sim.adminKey };
    const args = [
      'mirror',
      'sync',
      '--config',
      config,
      '--sign-key',
      keyFile,
      '--json',
      '--poll-interval',
      '100ms',
    ];
    const first = await runCli(args, env);
    expect(first.code, first.stderr).toBe(0);
    expectNoKey(first);
    expect(
      jsonEvents(first.stdout, 'signed')
        .map((e) => [e.repository, e.outcome])
        .sort(),
    ).toEqual([
      ['synced/one.example.com', 'signed'],
      ['synced/two.example.com', 'signed'],
    ]);
    for (const domain of ['one.example.com', 'two.example.com'])
      expect(await cosignAccepts(`${registry.host}/synced/${domain}:latest`)).toBe(true);

    const second = await runCli(args, env);
    expect(second.code, second.stderr).toBe(0);
    expect(jsonEvents(second.stdout, 'summary')[0]).toMatchObject({ pushed: 0, unchanged: 2, uploaded: 0 });
    expect(jsonEvents(second.stdout, 'signed').map((e) => e.outcome)).toEqual(['exists', 'exists']);
  });
});
