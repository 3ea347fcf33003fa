// `static-export sync` usage errors, refused before the cluster or the registry is touched, and the
// namespace it reads the values Secret in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../../support/servers/fake-kube-api.ts';
import { tempDir } from '../../support/temp.ts';
import { runCli } from '../../support/tools/run-cli.ts';

describe('static-export sync: usage', () => {
  it('refuses --password-stdin in the sidecar (stdin is read once) and names what to use', async () => {
    const r = await runCli(['sync', '--root', '/tmp/unused', '--secret', 'site', '--password-stdin']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--password-stdin works with --once only');
    expect(r.stderr).toContain('STATIC_EXPORT_REGISTRY_PASSWORD');
  });

  it('names the flag for a --keep that is not a whole number of at least 1, and for a missing --secret', async () => {
    const keep = await runCli(['sync', '--root', '/tmp/unused', '--secret', 'site', '--keep', '0']);
    expect(keep.code).toBe(2);
    expect(keep.stderr).toContain('--keep');
    const secret = await runCli(['sync', '--root', '/tmp/unused']);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain('--secret');
  });
});

describe('static-export sync --once: the namespace of the Secret', () => {
  let api: FakeKubeApi;
  beforeAll(async () => {
    api = await startFakeKubeApi();
  });
  afterAll(() => api.close());

  const syncOnce = (args: string[], env: Record<string, string>) =>
    runCli(
      [
        'sync',
        '--once',
        '--root',
        tempDir('sync-root-'),
        '--secret',
        'site',
        '--kubeconfig',
        api.kubeconfig,
        ...args,
      ],
      env,
    );

  it.each([
    ['--namespace over POD_NAMESPACE', ['--namespace', 'flag'], { POD_NAMESPACE: 'pod' }, 'flag'],
    ['POD_NAMESPACE (the downward API) without --namespace', [], { POD_NAMESPACE: 'pod' }, 'pod'],
    ["the kubeconfig's when POD_NAMESPACE is empty", [], { POD_NAMESPACE: '' }, 'docs'],
  ])('reads the Secret in %s', async (_, args, env, namespace) => {
    const r = await syncOnce(args, env);
    expect(r.code).toBe(EXIT.notReady);
    expect(r.stderr).toContain(`Secret ${namespace}/site does not exist`);
    expect(api.requests).toContain(`/api/v1/namespaces/${namespace}/secrets/site`);
  });
});
