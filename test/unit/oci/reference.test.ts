import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authFileCandidates, credentialsFromAuthFiles, parseChallenge } from '../../../src/oci/auth.ts';
import { OciError } from '../../../src/oci/errors.ts';
import { formatOciReference, isLoopbackRegistry, parseOciReference } from '../../../src/oci/reference.ts';
import { scrub } from '../../../src/redact.ts';

describe('parseOciReference', () => {
  it('reads registry, repository, tag and digest', () => {
    expect(parseOciReference('oci://registry.internal:5000/docs/docs.example.com')).toEqual({
      registry: 'registry.internal:5000',
      repository: 'docs/docs.example.com',
    });
    expect(parseOciReference('oci://Localhost:5000/a/b:latest')).toEqual({
      registry: 'localhost:5000',
      repository: 'a/b',
      tag: 'latest',
    });
    const digest = `sha256:${'a'.repeat(64)}`;
    const ref = parseOciReference(`oci://r.example/a@${digest}`);
    expect(ref).toEqual({ registry: 'r.example', repository: 'a', digest });
    expect(formatOciReference(ref)).toBe(`oci://r.example/a@${digest}`);
  });

  it.each([
    ['docker://r/a', /does not start with oci:\/\//],
    ['oci://r', /has no repository/],
    ['oci:///a', /has no repository/],
    ['oci://r/Upper', /invalid repository/],
    ['oci://r/a:bad tag', /invalid tag/],
    ['oci://r/a@sha256:xyz', /invalid digest/],
    ['oci://user:pw@r/a', /carries credentials/],
  ])('refuses %s, naming the flag and the expected form', (value, why) => {
    const error = (() => {
      try {
        parseOciReference(value, '--to');
      } catch (e) {
        return e;
      }
    })() as OciError;
    expect(error).toBeInstanceOf(OciError);
    expect(error.reason).toBe('Usage');
    expect(error.message).toMatch(why);
    expect(error.message).toMatch(/^--to /);
    expect(error.message).toContain('oci://REGISTRY/REPOSITORY');
  });

  it('never echoes credentials written into a reference', () => {
    const error = (() => {
      try {
        parseOciReference('oci://user:hunter2-secret@r.example/a', '--to');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).not.toContain('hunter2-secret');
  });

  it('knows loopback hosts', () => {
    for (const host of ['localhost', 'localhost:5000', '127.0.0.1:5000', '127.3.4.5', '[::1]:5000']) {
      expect(isLoopbackRegistry(host), host).toBe(true);
    }
    for (const host of ['registry.internal', '10.0.0.1:5000', 'localhost.example.com']) {
      expect(isLoopbackRegistry(host), host).toBe(false);
    }
  });
});

describe('parseChallenge', () => {
  it('reads Bearer and Basic challenges', () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
      ),
    ).toEqual({
      scheme: 'bearer',
      params: {
        realm: 'https://auth.example/token',
        service: 'registry.example',
        scope: 'repository:a/b:pull',
      },
    });
    expect(parseChallenge('Basic realm="Registry Realm"')).toEqual({
      scheme: 'basic',
      params: { realm: 'Registry Realm' },
    });
  });
});

describe('credentialsFromAuthFiles', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oci-auth-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('looks in $REGISTRY_AUTH_FILE, then $XDG_RUNTIME_DIR/containers/auth.json, then ~/.docker/config.json', () => {
    expect(
      authFileCandidates({ REGISTRY_AUTH_FILE: '/a.json', XDG_RUNTIME_DIR: '/run/u', HOME: '/home/u' }),
    ).toEqual(['/a.json', '/run/u/containers/auth.json', '/home/u/.docker/config.json']);
    expect(authFileCandidates({ HOME: '/home/u', DOCKER_CONFIG: '/cfg' })).toEqual(['/cfg/config.json']);
  });

  it('finds the entry of the registry (base64 auth or username/password), in the first file that has one', async () => {
    const podman = join(dir, 'auth.json');
    const docker = join(dir, 'docker', 'config.json');
    await writeFile(
      podman,
      JSON.stringify({
        auths: { 'registry.internal:5000': { auth: Buffer.from('alice:pa:ss-word-1').toString('base64') } },
      }),
    );
    await import('node:fs/promises').then((fs) => fs.mkdir(join(dir, 'docker')));
    await writeFile(
      docker,
      JSON.stringify({
        auths: { 'https://other.example/v2/': { username: 'bob', password: 'bob-password-9' } },
      }),
    );
    const env = { REGISTRY_AUTH_FILE: podman, DOCKER_CONFIG: join(dir, 'docker'), HOME: dir };
    expect(await credentialsFromAuthFiles('registry.internal:5000', env)).toEqual({
      username: 'alice',
      password: 'pa:ss-word-1',
      source: podman,
    });
    expect(await credentialsFromAuthFiles('other.example', env)).toMatchObject({ username: 'bob' });
    expect(await credentialsFromAuthFiles('nobody.example', env)).toBeUndefined();
    // Found passwords are known secrets from then on.
    expect(scrub('said bob-password-9')).toBe('said [REDACTED]');
  });

  it('asks the credential helper a file names (credHelpers before its entry, then credsStore), as docker login left it', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    // A helper speaking Docker's protocol: the server on stdin, JSON on stdout, "not found" otherwise.
    const helper = (name: string, body: string) =>
      writeFile(join(bin, `docker-credential-${name}`), `#!/bin/sh\nserver=$(cat)\n${body}\n`, {
        mode: 0o755,
      });
    await helper(
      'vault',
      `[ "$server" = "registry.internal:5000" ] && { echo '{"ServerURL":"registry.internal:5000","Username":"robot","Secret":"helper-secret-7"}'; exit 0; }\necho "credentials not found in native keychain"; exit 1`,
    );
    await helper('broken', 'echo "cannot reach the keyring daemon" >&2; exit 3');
    const file = join(dir, 'helpers.json');
    await writeFile(
      file,
      JSON.stringify({
        auths: { 'registry.internal:5000': { auth: Buffer.from('stale:entry').toString('base64') } },
        credHelpers: {
          'registry.internal:5000': 'vault',
          'down.example': 'broken',
          'gone.example': 'missing',
        },
        credsStore: 'vault',
      }),
    );
    const env = { PATH: `${bin}:${process.env.PATH}` };
    expect(await credentialsFromAuthFiles('registry.internal:5000', env, file)).toEqual({
      username: 'robot',
      password: 'helper-secret-7',
      source: file,
    });
    expect(scrub('token helper-secret-7')).toBe('token [REDACTED]');
    // The store answers "not found" for a registry it holds nothing for: anonymous.
    expect(await credentialsFromAuthFiles('public.example', env, file)).toBeUndefined();
    await expect(credentialsFromAuthFiles('gone.example', env, file)).rejects.toThrow(
      /names the credential helper missing for gone\.example, but docker-credential-missing is not on PATH: install the helper/,
    );
    await expect(credentialsFromAuthFiles('down.example', env, file)).rejects.toThrow(
      /docker-credential-broken get failed \(exit 3\): cannot reach the keyring daemon/,
    );
  });

  it('says which auth file is broken', async () => {
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{not json');
    await expect(credentialsFromAuthFiles('r.example', {}, broken)).rejects.toThrow(
      /broken\.json cannot be read/,
    );
    await expect(credentialsFromAuthFiles('r.example', {}, join(dir, 'missing.json'))).rejects.toThrow(
      /missing\.json cannot be read \(ENOENT\)/,
    );
  });
});
