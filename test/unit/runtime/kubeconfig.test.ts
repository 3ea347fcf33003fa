// Finding the API server and credentials: kubeconfig files (inline data, relative paths, token
// files, basic auth), the in-cluster service account, exec plugins through client-node.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadKubeAccess } from '../../../src/runtime/kubeconfig.ts';
import { tempDir } from '../../support/temp.ts';

const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(
  user: object,
  cluster: object = { server: 'https://10.0.0.1:6443' },
  dir = tempDir('kc-'),
) {
  const file = join(dir, 'config');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user }],
      contexts: [
        { name: 'other', context: { cluster: 'missing', user: 'u' } },
        { name: 'x', context: { cluster: 'c', user: 'u', namespace: 'docs' } },
      ],
      'current-context': 'x',
    }),
  );
  return { file, dir };
}

describe('loadKubeAccess', () => {
  it('reads inline certificates and a token of the current context', async () => {
    const { file } = kubeconfig(
      { token: 'abc', 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) },
      { server: 'https://10.0.0.1:6443', 'certificate-authority-data': b64(CA) },
    );
    const access = await loadKubeAccess(file, {});
    expect(access.server).toBe('https://10.0.0.1:6443');
    // kubectl's namespace when -n is not given.
    expect(access.namespace).toBe('docs');
    expect(access.tls).toEqual({ ca: CA, cert: CERT, key: KEY, rejectUnauthorized: true });
    expect(await access.headers()).toEqual({ authorization: 'Bearer abc' });
  });

  it('resolves file paths relative to the kubeconfig and reads a token file again on each call', async () => {
    const dir = tempDir('kc-');
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki/ca.crt'), CA);
    writeFileSync(join(dir, 'token'), 'first\n');
    const { file } = kubeconfig(
      { tokenFile: 'token' },
      {
        server: 'https://k8s.example:443',
        'certificate-authority': 'pki/ca.crt',
        'insecure-skip-tls-verify': true,
      },
      dir,
    );
    const access = await loadKubeAccess(file, {});
    expect(access.tls).toEqual({ ca: CA, rejectUnauthorized: false });
    expect(await access.headers()).toEqual({ authorization: 'Bearer first' });
    writeFileSync(join(dir, 'token'), 'rotated\n');
    expect(await access.headers()).toEqual({ authorization: 'Bearer rotated' });
  });

  it('sends basic auth for a username and password', async () => {
    const { file } = kubeconfig({ username: 'admin', password: 's3cret' });
    expect(await (await loadKubeAccess(file, {})).headers()).toEqual({
      authorization: `Basic ${b64('admin:s3cret')}`,
    });
  });

  it('takes KUBECONFIG, then ~/.kube/config, then the in-cluster service account', async () => {
    const { file } = kubeconfig({ token: 'from-env' });
    expect(await (await loadKubeAccess(undefined, { KUBECONFIG: file })).headers()).toEqual({
      authorization: 'Bearer from-env',
    });
    const home = tempDir('home-');
    mkdirSync(join(home, '.kube'));
    kubeconfig({ token: 'from-home' }, undefined, join(home, '.kube'));
    expect(await (await loadKubeAccess(undefined, { HOME: home })).headers()).toEqual({
      authorization: 'Bearer from-home',
    });
    const sa = tempDir('sa-');
    writeFileSync(join(sa, 'token'), 'pod-token');
    writeFileSync(join(sa, 'ca.crt'), CA);
    writeFileSync(join(sa, 'namespace'), 'static-export-system');
    const empty = tempDir('home-');
    const pod = await loadKubeAccess(
      undefined,
      { HOME: empty, KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      sa,
    );
    expect(pod.server).toBe('https://[fd00::1]:443');
    expect(pod.namespace).toBe('static-export-system');
    expect(pod.tls).toEqual({ ca: CA, rejectUnauthorized: true });
    expect(await pod.headers()).toEqual({ authorization: 'Bearer pod-token' });
  });

  it('says what is missing: no kubeconfig at all, no current context, an undefined cluster', async () => {
    const empty = tempDir('home-');
    await expect(loadKubeAccess(undefined, { HOME: empty }, empty)).rejects.toThrow(
      /no kubeconfig: pass --kubeconfig, set KUBECONFIG/,
    );
    const noContext = join(empty, 'no-context');
    writeFileSync(noContext, 'apiVersion: v1\nkind: Config\n');
    await expect(loadKubeAccess(noContext, {})).rejects.toThrow(
      `kubeconfig ${noContext} has no current-context`,
    );
    const { file } = kubeconfig({ token: 't' });
    const text = readFileSync(file, 'utf8').replace('current-context: x', 'current-context: other');
    writeFileSync(file, text);
    await expect(loadKubeAccess(file, {})).rejects.toThrow(
      `cluster "missing" of context "other" is not defined`,
    );
  });

  it('runs an exec credential plugin (through client-node)', async () => {
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'from-exec' },
    });
    const { file } = kubeconfig({
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'sh',
        args: ['-c', `echo '${credential}'`],
        interactiveMode: 'Never',
      },
    });
    const access = await loadKubeAccess(file, {});
    expect(access.server).toBe('https://10.0.0.1:6443');
    expect(await access.headers()).toMatchObject({ authorization: 'Bearer from-exec' });
  });
});
